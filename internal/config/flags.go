package config

import (
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The command line is read by this small parser, driven by struct tags, rather than by a
// general library: the one tried kept about 1.6 MB more code in the binary (its
// reflective method lookups stop the linker from dropping unused methods anywhere), and
// about 1.2 MiB more of it resident. The tags:
//
//	name:"x"          the flag is --x (default: the field name, dashed: MaxFileSize is --max-file-size)
//	default:"v"       its value when neither the flag nor its variable is given
//	envvar:"BORIS_X"  the environment variable read when the flag is not given
//	enum:"a,b"        the values allowed
//	negatable:""      a bool that --no-x sets to false
//	placeholder:"P"   what help shows for its value
//	hidden:""         left out of help
//	help:"…"          what help says of it
//	arg:""            not a flag: the one optional positional argument
//
// Fields are strings, ints, bools, durations or lists of strings. A duration is given in
// whole seconds ("90") or as Go writes durations of whole seconds ("90s", "10m", "1h"). A
// list flag may be given again to add a value; its variable holds a comma-separated list
// (commas inside braces are kept, see [SplitList]). Given flags beat variables, which
// beat defaults.

// ErrHelp is what [ParseFlags] returns for -h or --help: the caller prints help.
var ErrHelp = errors.New("help requested")

// flag is one field of a settings struct, as its tags describe it.
type flag struct {
	name        string
	field       int
	kind        reflect.Kind // String, Int, Bool, Int64 (time.Duration) or Slice (of strings)
	def         string
	hasDefault  bool
	enum        []string
	envvar      string
	negatable   bool
	hidden      bool
	positional  bool
	help        string
	placeholder string
}

// flagsOf reads the flags of struct type t, in field order.
func flagsOf(t reflect.Type) []flag {
	var flags []flag
	for i := range t.NumField() {
		sf := t.Field(i)
		kind := sf.Type.Kind()
		if kind == reflect.Slice && sf.Type.Elem().Kind() != reflect.String ||
			kind == reflect.Int64 && sf.Type != reflect.TypeFor[time.Duration]() ||
			kind != reflect.Slice && kind != reflect.String && kind != reflect.Int && kind != reflect.Int64 && kind != reflect.Bool {
			panic("config: field " + sf.Name + " has a type flags cannot set") // a programmer mistake
		}
		f := flag{name: sf.Tag.Get("name"), field: i, kind: kind, envvar: sf.Tag.Get("envvar"),
			help: sf.Tag.Get("help"), placeholder: sf.Tag.Get("placeholder")}
		if f.name == "" {
			f.name = dashed(sf.Name)
		}
		f.def, f.hasDefault = sf.Tag.Lookup("default")
		if e, ok := sf.Tag.Lookup("enum"); ok {
			f.enum = strings.Split(e, ",")
		}
		_, f.negatable = sf.Tag.Lookup("negatable")
		_, f.hidden = sf.Tag.Lookup("hidden")
		_, f.positional = sf.Tag.Lookup("arg")
		flags = append(flags, f)
	}
	return flags
}

// ParseFlags sets the fields of the struct dst points to from args (without the program
// name) and then, for the flags not given, from their variables in getenv and their
// defaults. It returns [ErrHelp] if args ask for help, and otherwise an error of one line
// that says which flag or variable is wrong.
func ParseFlags(dst any, args []string, getenv func(string) string) error {
	_, err := parseFlags(dst, args, getenv)
	return err
}

// parseFlags is [ParseFlags], and also returns how each field it did not leave at its
// default was set, by field index: "--name" from the command line, "$VAR" from a variable.
func parseFlags(dst any, args []string, getenv func(string) string) (map[int]string, error) {
	v := reflect.ValueOf(dst).Elem()
	flags := flagsOf(v.Type())
	flagArgs := args
	if i := slices.Index(args, "--"); i >= 0 {
		flagArgs = args[:i]
	}
	if slices.Contains(flagArgs, "-h") || slices.Contains(flagArgs, "--help") {
		return nil, ErrHelp // whatever else the line says
	}
	given := map[int]string{}
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		name, value, hasValue := strings.Cut(a, "=")
		f, negated := lookup(flags, strings.TrimPrefix(name, "--"))
		if f == nil || !strings.HasPrefix(name, "--") {
			return nil, fmt.Errorf("unknown flag %s: see --help", plain(name))
		}
		switch {
		case negated && hasValue:
			return nil, fmt.Errorf("%s takes no value", name)
		case negated:
			value = "false"
		case f.kind == reflect.Bool && !hasValue:
			value = "true"
		case !hasValue:
			if i+1 == len(args) || strings.HasPrefix(args[i+1], "--") {
				return nil, fmt.Errorf("%s needs a value", name)
			}
			i++
			value = args[i]
		}
		given[f.field] = name
		if err := f.set(v.Field(f.field), value); err != nil {
			return nil, fmt.Errorf("--%s %q %w", f.name, value, err)
		}
	}
	if err := setPositional(v, flags, positional, given); err != nil {
		return nil, err
	}
	return given, setUnset(v, flags, given, getenv)
}

// plain returns s as it is when it prints as one plain word, else quoted, so that an
// error stays one line whatever the command line held.
func plain(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) || unicode.IsSpace(r) }) >= 0 || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	return s
}

// setUnset sets the fields whose flags were not given from their variables, else their
// defaults, and adds those set from a variable to given.
func setUnset(v reflect.Value, flags []flag, given map[int]string, getenv func(string) string) error {
	for _, f := range flags {
		if _, ok := given[f.field]; ok {
			continue
		}
		if s := getenv(f.envvar); f.envvar != "" && s != "" {
			if err := f.setEnv(v.Field(f.field), s); err != nil {
				return fmt.Errorf("$%s=%q %w", f.envvar, s, err)
			}
			given[f.field] = "$" + f.envvar
		} else if f.hasDefault {
			if err := f.set(v.Field(f.field), f.def); err != nil {
				panic("config: default of --" + f.name + ": " + err.Error()) // a programmer mistake
			}
		}
	}
	return nil
}

// lookup finds the flag called name, or the negatable one that name is no-<flag> of.
func lookup(flags []flag, name string) (f *flag, negated bool) {
	for i := range flags {
		if flags[i].name == name && !flags[i].positional {
			return &flags[i], false
		}
	}
	if base, ok := strings.CutPrefix(name, "no-"); ok {
		for i := range flags {
			if flags[i].name == base && flags[i].negatable {
				return &flags[i], true
			}
		}
	}
	return nil, false
}

// setPositional sets the positional field, if there is one, from the arguments that are
// not flags; there may be at most one.
func setPositional(v reflect.Value, flags []flag, args []string, given map[int]string) error {
	i := slices.IndexFunc(flags, func(f flag) bool { return f.positional })
	switch {
	case len(args) == 0:
		return nil
	case i < 0:
		return fmt.Errorf("unexpected argument %q: flags begin with --; see --help", args[0])
	case len(args) > 1:
		return fmt.Errorf("unexpected argument %q: give one %s", args[1], flags[i].placeholderOr(strings.ToUpper(flags[i].name)))
	}
	f := flags[i]
	given[f.field] = f.placeholderOr(strings.ToUpper(f.name))
	if err := f.set(v.Field(f.field), args[0]); err != nil {
		return fmt.Errorf("%s %q %w", f.placeholderOr(strings.ToUpper(f.name)), args[0], err)
	}
	return nil
}

// set sets field v to the value s.
func (f flag) set(v reflect.Value, s string) error {
	if f.enum != nil && !slices.Contains(f.enum, s) {
		return fmt.Errorf("is not %s", orList(f.enum))
	}
	switch f.kind {
	case reflect.Int:
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return errors.New("is not a whole number")
		}
		v.SetInt(int64(n))
	case reflect.Int64:
		d, err := parseSeconds(s)
		if err != nil {
			return err
		}
		v.SetInt(int64(d))
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return errors.New("is not true or false")
		}
		v.SetBool(b)
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.ValueOf(s)))
	default:
		v.SetString(s)
	}
	return nil
}

// setEnv sets field v from its variable's value s: a list is split on commas outside
// braces.
func (f flag) setEnv(v reflect.Value, s string) error {
	if f.kind != reflect.Slice {
		return f.set(v, s)
	}
	for _, item := range SplitList(s) {
		if err := f.set(v, item); err != nil {
			return err
		}
	}
	return nil
}

// WriteHelp writes the help of a command whose settings are the struct dst points to:
// the usage line, the description, then each flag with its value, help and variable.
func WriteHelp(w io.Writer, usage, description string, dst any) {
	flags := flagsOf(reflect.TypeOf(dst).Elem())
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", usage, wrap(description, 80, ""))
	if i := slices.IndexFunc(flags, func(f flag) bool { return f.positional }); i >= 0 {
		f := flags[i]
		fmt.Fprintf(w, "\nArguments:\n  [%s]\n%s\n", f.placeholderOr(strings.ToUpper(f.name)), wrap(f.describe(), 80, "        "))
	}
	fmt.Fprintf(w, "\nFlags:\n  -h, --help\n        Show this help.\n")
	for _, f := range flags {
		if f.hidden || f.positional {
			continue
		}
		fmt.Fprintf(w, "  %s\n%s\n", f.usage(), wrap(f.describe(), 80, "        "))
	}
}

// usage is the flag as help shows it: --name, --[no-]name or --name=VALUE.
func (f flag) usage() string {
	switch {
	case f.kind == reflect.Bool && f.negatable:
		return "--[no-]" + f.name
	case f.kind == reflect.Bool:
		return "--" + f.name
	case f.placeholder != "":
		return "--" + f.name + "=" + f.placeholder
	case f.hasDefault && f.def != "":
		return "--" + f.name + "=" + f.def
	case f.kind == reflect.Int:
		return "--" + f.name + "=N"
	case f.kind == reflect.Int64:
		return "--" + f.name + "=SECONDS"
	}
	return "--" + f.name + "=VALUE"
}

// describe is the help text of the flag, its default when usage does not show it, and its
// variable.
func (f flag) describe() string {
	s := f.help
	if f.hasDefault && f.def != "" && (f.placeholder != "" || f.kind == reflect.Bool) {
		s += " Default: " + f.def + "."
	}
	if f.envvar != "" {
		s += " ($" + f.envvar + ")"
	}
	return s
}

// parseSeconds reads a duration: whole seconds, or a Go duration of whole seconds.
func parseSeconds(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		if limit := int64(math.MaxInt64 / time.Second); n > limit || n < -limit {
			return 0, errors.New("is too large")
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil || d%time.Second != 0 {
		return 0, errors.New("is not a whole number of seconds or a duration such as 90s, 10m or 1h")
	}
	return d, nil
}

func (f flag) placeholderOr(alt string) string {
	if f.placeholder != "" {
		return f.placeholder
	}
	return alt
}

// wrap breaks s into lines of at most width characters where it can, each after indent.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(s) {
		if len(line) > len(indent) && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	b.WriteString(line)
	return b.String()
}

// orList is "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// dashed is the flag name of a field without a name tag: MaxFileSize is max-file-size.
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
