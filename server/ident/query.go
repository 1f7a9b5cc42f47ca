package ident

// ParseQuery reads query options from a URL's raw query ("k=v&k2=v2"), as
// net/url's ParseQuery reads it ('+' is a space, %XX a byte, a ';' is an
// error). A key given twice is an error.
func ParseQuery(raw string) (map[string]string, error) {
	return ParseQueryPrefix(raw, "")
}

// ParseQueryPrefix is ParseQuery for the keys that start with prefix
// (the inspector's opt.NAME), with prefix cut off; the other keys are
// checked for syntax and repeats but not returned.
func ParseQueryPrefix(raw, prefix string) (map[string]string, error) {
	if raw == "" {
		return nil, nil
	}
	var opts map[string]string
	seen := make([]string, 0, 8)
	for rest := raw; rest != ""; {
		var kv string
		kv, rest, _ = cut(rest, '&')
		if kv == "" {
			continue
		}
		if index(kv, ';') >= 0 {
			return nil, &Error{Part: PartOptions, Input: raw, Err: ErrOptions}
		}
		k, v, _ := cut(kv, '=')
		k, ok1 := unescape(k)
		v, ok2 := unescape(v)
		if !ok1 || !ok2 {
			return nil, &Error{Part: PartOptions, Input: raw, Err: ErrOptions}
		}
		if contains(seen, k) {
			return nil, &Error{Part: PartOptions, Input: k, Err: ErrRepeated}
		}
		seen = append(seen, k)
		if len(k) < len(prefix) || k[:len(prefix)] != prefix {
			continue
		}
		name := k[len(prefix):]
		if opts == nil {
			opts = make(map[string]string, 4)
		}
		opts[name] = v
	}
	return opts, nil
}

// QueryString is "?k=v&…" for opts, sorted by key and escaped as a URL's
// query (net/url's QueryEscape), or "" when there are none. History keys
// on disk are spelt so.
func QueryString(opts map[string]string) string {
	if len(opts) == 0 {
		return ""
	}
	b := make([]byte, 0, 32)
	for i, k := range SortedKeys(opts) {
		if i == 0 {
			b = append(b, '?')
		} else {
			b = append(b, '&')
		}
		b = appendEscape(b, k)
		b = append(b, '=')
		b = appendEscape(b, opts[k])
	}
	return string(b)
}

// SortedKeys returns the names of opts, sorted: the order every spelling
// writes options in.
func SortedKeys(opts map[string]string) []string {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sortStrings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

const hex = "0123456789ABCDEF"

// appendEscape appends s escaped as a query component: letters, digits and
// "-_.~" as they are, a space as '+', every other byte as %XX.
func appendEscape(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
			b = append(b, c)
		case c == ' ':
			b = append(b, '+')
		default:
			b = append(b, '%', hex[c>>4], hex[c&15])
		}
	}
	return b
}

// unescape reads a query component: '+' is a space, %XX a byte. It reports
// false for a '%' not followed by two hex digits.
func unescape(s string) (string, bool) {
	if index(s, '%') < 0 && index(s, '+') < 0 {
		return s, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			b = append(b, ' ')
		case '%':
			if i+2 >= len(s) {
				return "", false
			}
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if !ok1 || !ok2 {
				return "", false
			}
			b = append(b, hi<<4|lo)
			i += 2
		default:
			b = append(b, c)
		}
	}
	return string(b), true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
