package codecs_test

import (
	"errors"
	"testing"

	"github.com/querylens/querylens/codecs"
)

func TestParseUint(t *testing.T) {
	for _, tc := range []struct {
		in   string
		bits int
		want uint64
		ok   bool
	}{
		{"0", 32, 0, true},
		{"10", 32, 10, true},
		{"010", 32, 10, true}, // decimal, not octal
		{"0010", 32, 10, true},
		{"08", 32, 8, true}, // would be a syntax error in octal
		{"0x10", 32, 16, true},
		{"0X1f", 32, 31, true},
		{"0xFFFFFFFF", 32, 0xffffffff, true},
		{"4294967295", 32, 0xffffffff, true},
		{"4294967296", 32, 0, false},
		{"0x100000000", 32, 0, false},
		{"65535", 16, 65535, true},
		{"65536", 16, 0, false},
		{"", 32, 0, false},
		{"0x", 32, 0, false},
		{"0x_1", 32, 0, false},
		{"1_0", 32, 0, false},
		{"-1", 32, 0, false},
		{"+1", 32, 0, false},
		{" 1", 32, 0, false},
		{"0b1", 32, 0, false},
		{"0o7", 32, 0, false},
		{"0xg", 32, 0, false},
		{"00x1", 32, 0, false},
	} {
		got, err := codecs.ParseUint(tc.in, tc.bits)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("ParseUint(%q, %d) = %d, %v; want %d, ok %v", tc.in, tc.bits, got, err, tc.want, tc.ok)
		}
	}
}

var testOptions = []codecs.Option{
	{Name: "n", Kind: codecs.OptionUint, Default: "7"},
	{Name: "on", Kind: codecs.OptionBool, Default: "true"},
	{Name: "style", Kind: codecs.OptionChoice, Default: "a", Choices: []string{"a", "b"}},
	{Name: "id", Kind: codecs.OptionHex, Default: "0000002a"},
	{Name: "opt", Kind: codecs.OptionUint, Default: ""},
}

type optionValues struct {
	n     uint64
	on    bool
	style string
	id    [4]byte
	opt   bool
}

func readTestOptions(opts map[string]string) (optionValues, error) {
	r := codecs.ReadOptions("test", testOptions, opts)
	var v optionValues
	v.n = r.Uint("n", 16)
	v.on = r.Bool("on")
	v.style = r.Choice("style")
	r.Hex("id", v.id[:])
	v.opt = r.Set("opt")
	return v, r.Err()
}

func TestReadOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  map[string]string
		want  optionValues
		field string // of the error; "" for none
		msg   string
	}{
		{name: "defaults", want: optionValues{n: 7, on: true, style: "a", id: [4]byte{0, 0, 0, 42}}},
		{name: "given", opts: map[string]string{"n": "0x10", "on": "false", "style": "b", "id": "DEADbeef", "opt": "1"},
			want: optionValues{n: 16, style: "b", id: [4]byte{0xde, 0xad, 0xbe, 0xef}, opt: true}},
		{name: "leading zero, spaces", opts: map[string]string{"n": " 010\t"}, want: optionValues{n: 10, on: true, style: "a", id: [4]byte{0, 0, 0, 42}}},
		{name: "unknown key", opts: map[string]string{"zz": "1", "nn": "1", "n": "1"}, field: "options.nn", msg: "bad value: unknown option"},
		{name: "empty key", opts: map[string]string{"": "1", "zz": "1"}, field: "options.", msg: "bad value: unknown option"},
		{name: "bad uint", opts: map[string]string{"n": "70000"}, field: "options.n", msg: `bad value: "70000" is not a 16-bit number (decimal, or hex after 0x)`},
		{name: "bad bool", opts: map[string]string{"on": "yes"}, field: "options.on", msg: `bad value: "yes" is not true or false`},
		{name: "bad choice", opts: map[string]string{"style": "c"}, field: "options.style", msg: `bad value: "c" is not one of a, b`},
		{name: "short hex", opts: map[string]string{"id": "2a"}, field: "options.id", msg: `bad value: "2a" is not 8 hex digits`},
		{name: "bad hex", opts: map[string]string{"id": "0000002g"}, field: "options.id", msg: `bad value: "0000002g" is not 8 hex digits`},
		{name: "first error sticks", opts: map[string]string{"n": "x", "on": "x"}, field: "options.n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readTestOptions(tc.opts)
			if tc.field == "" {
				if err != nil || got != tc.want {
					t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
				}
				return
			}
			e, ok := errors.AsType[*codecs.Error](err)
			if !ok || e.Field != tc.field || e.Protocol != "test" || !errors.Is(err, codecs.ErrBadValue) {
				t.Fatalf("error %v; want a *codecs.Error at %s wrapping ErrBadValue", err, tc.field)
			}
			if tc.msg != "" && e.Message() != tc.msg {
				t.Errorf("message %q; want %q", e.Message(), tc.msg)
			}
		})
	}
}
