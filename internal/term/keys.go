package term

import (
	"fmt"
	"strings"

	uv "github.com/charmbracelet/ultraviolet"
)

// Key is a key an agent can name: Enter, Esc, an arrow, Ctrl-C...
type Key struct {
	code rune
	mod  uv.KeyMod
}

func (k Key) event() uv.KeyPressEvent { return uv.KeyPressEvent{Code: k.code, Mod: k.mod} }

// IsEsc reports whether k is Esc, unmodified.
func (k Key) IsEsc() bool { return k.code == uv.KeyEscape && k.mod == 0 }

// keyNames are the named keys, lower case, without separators.
var keyNames = []struct {
	name string
	code rune
}{
	{"enter", uv.KeyEnter}, {"return", uv.KeyEnter}, {"tab", uv.KeyTab},
	{"backspace", uv.KeyBackspace}, {"esc", uv.KeyEscape}, {"escape", uv.KeyEscape},
	{"space", uv.KeySpace}, {"up", uv.KeyUp}, {"down", uv.KeyDown}, {"left", uv.KeyLeft},
	{"right", uv.KeyRight}, {"home", uv.KeyHome}, {"end", uv.KeyEnd},
	{"pageup", uv.KeyPgUp}, {"pgup", uv.KeyPgUp}, {"pagedown", uv.KeyPgDown},
	{"pgdown", uv.KeyPgDown}, {"delete", uv.KeyDelete}, {"del", uv.KeyDelete},
	{"insert", uv.KeyInsert}, {"f1", uv.KeyF1}, {"f2", uv.KeyF2}, {"f3", uv.KeyF3},
	{"f4", uv.KeyF4}, {"f5", uv.KeyF5}, {"f6", uv.KeyF6}, {"f7", uv.KeyF7},
	{"f8", uv.KeyF8}, {"f9", uv.KeyF9}, {"f10", uv.KeyF10}, {"f11", uv.KeyF11},
	{"f12", uv.KeyF12},
}

// KeyList names the keys [ParseKey] knows, for messages.
const KeyList = "enter, tab, backspace, esc, space, up, down, left, right, home, end, pageup, pagedown, delete, insert, f1-f12, and ctrl-A to ctrl-Z (also ctrl-[ ctrl-\\ ctrl-] ctrl-^ ctrl-_ ctrl-space), each optionally with alt-"

// ParseKey reads a key's name: "ctrl-c", "Ctrl+C", "C-c", "^C", "enter", "Up", "alt-b".
// Case, and '-', '+' or '_' between modifier and key, do not matter.
func ParseKey(name string) (Key, error) {
	s := strings.ToLower(strings.TrimSpace(name))
	var k Key
	for {
		rest, ok := cutModifier(s)
		if !ok {
			break
		}
		k.mod |= rest.mod
		s = rest.s
	}
	if len(s) == 2 && s[0] == '^' {
		k.mod |= uv.ModCtrl
		s = s[1:]
	}
	if k.mod&uv.ModCtrl != 0 && len(s) == 1 && strings.Contains("abcdefghijklmnopqrstuvwxyz[\\]^_", s) {
		k.code = rune(s[0])
		return k, nil
	}
	compact := strings.NewReplacer("-", "", "_", "", " ", "").Replace(s)
	for _, n := range keyNames {
		if n.name == compact {
			k.code = n.code
			return k, nil
		}
	}
	if k.mod == uv.ModAlt && len([]rune(s)) == 1 {
		k.code = []rune(s)[0]
		return k, nil
	}
	return Key{}, fmt.Errorf("unknown key %q: known keys are %s", name, KeyList)
}

type modRest struct {
	mod uv.KeyMod
	s   string
}

// cutModifier takes a leading "ctrl-", "c-", "alt-", "m-" or "meta-" off s.
func cutModifier(s string) (modRest, bool) {
	for _, m := range []struct {
		prefix string
		mod    uv.KeyMod
	}{{"ctrl", uv.ModCtrl}, {"control", uv.ModCtrl}, {"c", uv.ModCtrl}, {"alt", uv.ModAlt}, {"meta", uv.ModAlt}, {"m", uv.ModAlt}} {
		rest, ok := strings.CutPrefix(s, m.prefix)
		if ok && len(rest) > 1 && strings.ContainsRune("-+_", rune(rest[0])) {
			return modRest{m.mod, rest[1:]}, true
		}
	}
	return modRest{}, false
}
