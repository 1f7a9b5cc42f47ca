package alerts

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/querylens/querylens/codecs"
)

// MaxName is the length, in characters, a server, map or player name is
// cut to before it goes into any message.
const MaxName = 100

// CleanName makes a name a server chose fit to show: colour escapes
// stripped as every page strips them (codecs.StripColors), control and
// format characters removed (newlines, the right-to-left override, zero
// widths), runs of spaces collapsed, and cut to MaxName characters with
// "…". It does not escape: each destination escapes its own way.
func CleanName(s string) string {
	if len(s) > 4*4*MaxName {
		// A name is never worth reading past this: bound the work.
		s = s[:4*4*MaxName]
	}
	s = codecs.StripColors(strings.ToValidUTF8(s, ""))
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r), r == utf8.RuneError:
			continue
		case unicode.IsSpace(r):
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return Truncate(b.String(), MaxName)
}

// Length is s's length as Discord and Slack count it: in UTF-16 code
// units, as JavaScript does. It is never less than the count of runes, so
// a text within a limit by Length is within it by either count; an
// astral character (most emoji) counts two.
func Length(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// Truncate cuts s to at most limit (by Length), ending it with "…" when
// anything was cut. It never splits a character.
func Truncate(s string, limit int) string {
	if limit <= 0 {
		return ""
	}
	if len(s) <= limit || Length(s) <= limit {
		return s
	}
	n := 0
	for i, r := range s {
		if n+utf16.RuneLen(r) > limit-1 {
			return s[:i] + "…"
		}
		n += utf16.RuneLen(r)
	}
	return s
}

// discordEscaper escapes Discord's markdown with backslashes and breaks
// mentions (@everyone, <@123>, <#1>, <t:…>) with a zero-width space that
// CleanName never lets through from input. allowed_mentions is what
// stops a ping; this stops the text from looking like one.
var discordEscaper = strings.NewReplacer(
	`\`, `\\`, `*`, `\*`, `_`, `\_`, `~`, `\~`, "`", "\\`", `|`, `\|`,
	`>`, `\>`, `#`, `\#`, `[`, `\[`, `]`, `\]`,
	`@`, "@\u200b", `<`, "<\u200b",
)

// Discord is a clean name escaped for Discord's markdown.
func Discord(s string) string { return discordEscaper.Replace(CleanName(s)) }

// slackEscaper escapes the three characters Slack's mrkdwn gives meaning
// to (its links and mentions are <…>).
var slackEscaper = strings.NewReplacer(`&`, `&amp;`, `<`, `&lt;`, `>`, `&gt;`)

// Slack is a clean name escaped for Slack's mrkdwn.
func Slack(s string) string { return slackEscaper.Replace(CleanName(s)) }

// slackText escapes text this package wrote (no cleaning).
func slackText(s string) string { return slackEscaper.Replace(s) }
