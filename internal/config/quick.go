package config

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// quickParse reads a command line and environment as kong would, without building kong's
// model, which costs a start several milliseconds (most of reading the command line). It
// takes only what is plain: every word a known long flag (--name value, --name=value,
// --flag, --no-flag for a negatable one), no flag but a list given twice, every value one
// that kong reads the same way and accepts. For anything else (help, --version, an
// unknown or repeated flag, a value kong might refuse or read otherwise) it reports false
// and kong does the work, so that errors and help stay kong's.
// TestQuickParseAgreesWithKong holds it to kong.
func quickParse(args []string, getenv func(string) string) (cli, bool) {
	var c cli
	flags := quickFlags()
	fields := reflect.ValueOf(&c).Elem()
	given := map[string]bool{}
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		name, ok := strings.CutPrefix(name, "--")
		if !ok {
			return cli{}, false
		}
		f, ok := flags[name]
		negated := false
		if base, isNo := strings.CutPrefix(name, "no-"); !ok && isNo {
			f, ok = flags[base]
			negated = ok && f.negatable
			ok = negated
		}
		if !ok || given[f.name] && f.kind != reflect.Slice {
			return cli{}, false
		}
		given[f.name] = true
		switch {
		case f.kind == reflect.Bool:
			if hasValue {
				return cli{}, false
			}
			value = strconv.FormatBool(!negated)
		case !hasValue:
			if i+1 == len(args) || strings.HasPrefix(args[i+1], "-") {
				return cli{}, false
			}
			i++
			value = args[i]
		}
		if value == "" || !f.set(fields.Field(f.field), value) {
			return cli{}, false
		}
	}
	for _, f := range flags {
		if given[f.name] {
			continue
		}
		if v := getenv(f.envvar); f.envvar != "" && v != "" {
			if !f.setEnv(fields.Field(f.field), v) {
				return cli{}, false
			}
		} else if f.hasDefault && !f.set(fields.Field(f.field), f.def) {
			return cli{}, false
		}
	}
	return c, true
}

// quickFlag is one flag of the cli model, as its struct tags describe it to kong.
type quickFlag struct {
	name       string
	field      int
	kind       reflect.Kind // String, Int, Bool or Slice (of strings)
	def        string
	hasDefault bool
	enum       []string
	envvar     string
	negatable  bool
	splitComma bool // a list flag whose values kong splits on commas
}

// quickFlags reads the cli model's flags from its struct tags, by flag name. Fields of
// another type (kong.VersionFlag) are left out: quickParse leaves them to kong.
func quickFlags() map[string]quickFlag {
	t := reflect.TypeFor[cli]()
	flags := make(map[string]quickFlag, t.NumField())
	for i := range t.NumField() {
		sf := t.Field(i)
		var kind reflect.Kind
		switch sf.Type {
		case reflect.TypeFor[string](), reflect.TypeFor[int](), reflect.TypeFor[bool]():
			kind = sf.Type.Kind()
		case reflect.TypeFor[[]string]():
			kind = reflect.Slice
		default:
			continue
		}
		f := quickFlag{name: sf.Tag.Get("name"), field: i, kind: kind, envvar: sf.Tag.Get("envvar")}
		if f.name == "" {
			f.name = dashed(sf.Name)
		}
		f.def, f.hasDefault = sf.Tag.Lookup("default")
		if e, ok := sf.Tag.Lookup("enum"); ok {
			f.enum = strings.Split(e, ",")
		}
		_, f.negatable = sf.Tag.Lookup("negatable")
		f.splitComma = kind == reflect.Slice && sf.Tag.Get("sep") != "none"
		flags[f.name] = f
	}
	return flags
}

// set sets v to the flag value s, reporting false when kong might read s otherwise or
// refuse it: an int not written plainly in decimal, a bool other than true, false, 1 or
// 0, a value outside the enum, a list item that kong would split.
func (f quickFlag) set(v reflect.Value, s string) bool {
	switch f.kind {
	case reflect.String:
		if f.enum != nil && !slices.Contains(f.enum, s) {
			return false
		}
		v.SetString(s)
	case reflect.Int:
		digits := strings.TrimPrefix(s, "-")
		n, err := strconv.Atoi(s)
		if err != nil || digits == "" || digits[0] == '0' && digits != "0" || strings.ContainsFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) {
			return false
		}
		v.SetInt(int64(n))
	case reflect.Bool:
		switch s {
		case "true", "1":
			v.SetBool(true)
		case "false", "0":
			v.SetBool(false)
		default:
			return false
		}
	case reflect.Slice:
		if f.splitComma && strings.ContainsAny(s, ",\\") {
			return false
		}
		v.Set(reflect.Append(v, reflect.ValueOf(s)))
	default:
		return false
	}
	return true
}

// setEnv sets v from the environment variable's value s, as envResolver and kong do: a
// list is split on commas outside braces.
func (f quickFlag) setEnv(v reflect.Value, s string) bool {
	if f.kind != reflect.Slice {
		return f.set(v, s)
	}
	items := SplitList(s)
	if len(items) == 0 {
		return false
	}
	for _, item := range items {
		if !f.set(v, item) {
			return false
		}
	}
	return true
}

// dashed is kong's flag name for a field without a name tag: MaxFileSize is
// max-file-size.
func dashed(field string) string {
	var b strings.Builder
	for i, r := range field {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('-')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
