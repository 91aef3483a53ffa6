package shell

import "bytes"

// escapeStripper removes escape sequences from a stream of terminal output, however they
// are split between writes: what a command wrote to its terminal is kept, and spilled, as
// the text it shows, while the terminal's screen gets the raw bytes. Control characters
// (newlines, carriage returns, backspaces) are kept: reading the text interprets them.
//
// It knows the sequences of ECMA-48 as terminals parse them: ESC followed by
// intermediates and a final byte; CSI (ESC [) with parameters, intermediates and a final
// byte; and the strings OSC, DCS, SOS, PM and APC (ESC ] P X ^ _), which end at ST (ESC \)
// or, as xterm allows, BEL. C0 controls inside a sequence act as they do on a terminal (they
// are kept), and CAN or SUB cancel it.
type escapeStripper struct {
	state escState
	out   []byte
}

type escState uint8

const (
	escGround    escState = iota
	escEscape             // after ESC
	escInter              // ESC and intermediates, before the final byte
	escCSI                // ESC [ and parameters or intermediates, before the final byte
	escString             // inside a string, until ST or BEL
	escStringEsc          // ESC inside a string: ST if a backslash follows
)

// strip returns p without its escape sequences. The result is valid until the next call.
func (s *escapeStripper) strip(p []byte) []byte {
	s.out = s.out[:0]
	for len(p) > 0 {
		if s.state == escGround {
			i := bytes.IndexByte(p, 0x1b)
			if i < 0 {
				return append(s.out, p...)
			}
			s.out = append(s.out, p[:i]...)
			s.state, p = escEscape, p[i+1:]
			continue
		}
		s.step(p[0])
		p = p[1:]
	}
	return s.out
}

// step takes one byte of an escape sequence.
func (s *escapeStripper) step(b byte) {
	switch {
	case b == 0x18 || b == 0x1a: // CAN, SUB
		s.state = escGround
		return
	case b == 0x1b:
		if s.state == escString {
			s.state = escStringEsc
		} else {
			s.state = escEscape
		}
		return
	case s.state == escString:
		if b == 0x07 {
			s.state = escGround
		}
		return
	case s.state == escStringEsc:
		// ESC \ ends the string; anything else starts a sequence after it.
		s.state = escEscape
		if b == '\\' {
			s.state = escGround
			return
		}
		s.step(b)
		return
	case b < 0x20 || b == 0x7f:
		if b != 0x7f {
			s.out = append(s.out, b) // a control acts as on a terminal
		}
		return
	}
	switch s.state {
	case escEscape:
		switch {
		case b == '[':
			s.state = escCSI
		case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
			s.state = escString
		case b >= 0x20 && b <= 0x2f:
			s.state = escInter
		default:
			s.state = escGround // a final byte: ESC 7, ESC c, ESC =
		}
	case escInter:
		if b >= 0x30 {
			s.state = escGround
		}
	case escCSI:
		if b >= 0x40 {
			s.state = escGround // the final byte; parameters and intermediates go on
		}
	}
}
