// Package term is the terminal side of a command run in a pseudo-terminal: a screen
// that interprets what the command prints as a terminal would (through a terminal
// emulator library), the keys an agent can name, the command's output as plain text, and
// the kernel's view of whether the program in the foreground waits for input.
package term

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/x/vt"
	"golang.org/x/sys/unix"
)

// Defaults of a command's terminal.
const (
	// TERM is the terminal type commands are told: the emulator speaks xterm's language.
	TERM        = "xterm-256color"
	DefaultRows = 30
	DefaultCols = 120
)

// maxPending bounds the output waiting to be interpreted. The emulator interprets a few
// megabytes a second; a program that prints faster (a flood of log lines) has its older
// output skipped on the screen, which then shows the newest, as a person would see it:
// past maxPending only the last keepOnSkip bytes are kept, and the screen catches up at
// most every floodPause, or when it is looked at, so that a flood does not spend a core
// on drawing what nobody sees.
const (
	maxPending = 64 << 10
	keepOnSkip = 16 << 10
	floodPause = 50 * time.Millisecond
)

// The emulator is made when the screen is first needed: when it is looked at, a key is
// pressed, or the program switches screens or asks the terminal something. Until then
// the output's last keepOnSkip bytes, at least, wait for it (a REPL or a build never
// costs an emulator, a few megabytes). From then on, output that asks nothing of the
// terminal is interpreted lazyDelay after it comes, or once lazyBytes of it wait, or as
// soon as the screen is looked at.
const (
	lazyDelay = 20 * time.Millisecond
	lazyBytes = 16 << 10
	// maxCarry bounds an escape sequence split between writes that the screen looks at
	// whole (a window title set by a shell's prompt, say); a longer one counts as a
	// switch and a question.
	maxCarry = 512
)

// writeTimeout bounds how long what is typed waits for room in the terminal's input: a
// program that reads none of its input must not hold a call. The terminal's answers to a
// program's queries never wait: one that does not read them has no use for them, and a
// flood of queries must not hold the screen, a kill or the end of a task.
const writeTimeout = 2 * time.Second

// Between tries to type into a full input queue the screen sleeps, from retryFirst doubling
// up to retryMost: the kernel may call a full pseudo-terminal writable while a write still
// finds no room, so waiting for it to say so would spin.
const (
	retryFirst = 200 * time.Microsecond
	retryMost  = 20 * time.Millisecond
)

// ErrInputBlocked says that the program did not read its input.
var ErrInputBlocked = errors.New("the program is not reading its input")

// Screen is the visible terminal of a command: what it printed, interpreted. Output is
// given to it with [Screen.Write], which never blocks; keys and text typed at it go to
// the command, in order with the terminal's own answers to the program's queries (cursor
// position, device attributes). It is safe for concurrent use.
type Screen struct {
	in atomic.Pointer[os.File] // the master side of the pseudo-terminal, once attached

	rows, cols int

	mu sync.Mutex   // guards em: the emulator is not safe for concurrent use
	em *vt.Emulator // nil until the screen is needed

	pmu     sync.Mutex
	pending []byte
	busy    bool // the feeder is interpreting a batch
	alt     int  // the alternate screen's state in skipped output: -1 unknown, 0 off, 1 on
	skipped bool // output was skipped since the last snapshot
	// flooding: output was skipped since the feeder last looked; it pauses.
	flooding bool
	want     chan struct{} // someone waits for the screen to catch up
	fed      *sync.Cond
	closed   bool
	lost     int64 // input bytes the program did not take
	// switches counts the writes not yet interpreted that may switch screens (see
	// scan); while it is 0, the screen is the alternate one exactly when onAlt is true.
	switches int
	onAlt    bool
	carry    []byte // an escape sequence the last write began and did not end
	// urgent: pending output may ask the terminal something; it is interpreted at once.
	// Other output waits up to lazyDelay, so that interpreting it does not compete with
	// the program and its caller while they exchange a line.
	urgent bool
	needed bool // the emulator interprets the output (see maxCarry's block)
	wake   chan struct{}
	wg     sync.WaitGroup
}

// NewScreen returns the screen of a terminal of rows and cols. What is typed at it goes
// nowhere until it is attached to a command's terminal ([Screen.Attach]).
func NewScreen(rows, cols int) *Screen {
	s := &Screen{rows: rows, cols: cols, alt: -1, wake: make(chan struct{}, 1), want: make(chan struct{}, 1)}
	s.fed = sync.NewCond(&s.pmu)
	s.wg.Go(s.feed)
	return s
}

// emulator returns the emulator, made on first use. s.mu is held.
func (s *Screen) emulator() *vt.Emulator {
	if s.em == nil {
		s.em = vt.NewEmulator(s.cols, s.rows)
		s.em.SetScrollbackSize(1) // the screen is what is visible; the transcript is kept apart (0 means the default, 10000 lines)
		s.pmu.Lock()
		if !s.closed {
			s.wg.Go(s.answer)
		} else {
			// Nobody will read what it sends: it must not wait for a reader.
			_ = s.em.InputPipe().(*io.PipeWriter).CloseWithError(io.EOF)
		}
		s.pmu.Unlock()
	}
	return s.em
}

// need has the emulator interpret the output from now on.
func (s *Screen) need() {
	s.pmu.Lock()
	s.needed = true
	s.pmu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Write hands output of the command to the screen. It never blocks: past maxPending
// the oldest output not yet interpreted is skipped.
func (s *Screen) Write(p []byte) {
	s.pmu.Lock()
	if !s.closed {
		seen := p
		if len(s.carry) > 0 {
			seen = append(s.carry, p...) // the sequence it completes, looked at whole
		}
		e := scan(seen)
		s.carry = nil
		if e.open >= 0 {
			if tail := seen[e.open:]; len(tail) <= maxCarry {
				s.carry = append([]byte(nil), tail...)
			} else {
				e.switches, e.asks = true, true
			}
		}
		if e.switches {
			s.switches++
		}
		s.urgent = s.urgent || e.asks
		s.needed = s.needed || e.switches || e.asks
		s.pending = append(s.pending, p...)
		if len(s.pending) > maxPending {
			over := len(s.pending) - keepOnSkip
			s.noteAlt(s.pending[:over])
			s.pending = append(s.pending[:0], s.pending[over:]...)
			if s.needed {
				s.skipped, s.flooding = true, true // the screen fell behind
			}
		}
	}
	needed := s.needed
	urgent := needed && (s.urgent || len(s.pending) >= lazyBytes)
	s.pmu.Unlock()
	if !needed {
		return // kept for when the screen is needed
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
	if urgent {
		select {
		case s.want <- struct{}{}:
		default:
		}
	}
}

// Alternate-screen switches, as xterm and its followers spell them.
var (
	altOn  = [][]byte{[]byte("\x1b[?1049h"), []byte("\x1b[?1047h"), []byte("\x1b[?47h")}
	altOff = [][]byte{[]byte("\x1b[?1049l"), []byte("\x1b[?1047l"), []byte("\x1b[?47l")}
)

// noteAlt records the last alternate-screen switch in output about to be skipped, so
// that the screen still knows which screen the program draws on. s.pmu is held.
func (s *Screen) noteAlt(b []byte) {
	last, state := -1, s.alt
	for i, set := range [][][]byte{altOff, altOn} {
		for _, seq := range set {
			if at := bytes.LastIndex(b, seq); at > last {
				last, state = at, i
			}
		}
	}
	s.alt = state
}

// feed interprets pending output until the screen is closed.
func (s *Screen) feed() {
	for {
		s.pmu.Lock()
		for (len(s.pending) == 0 || !s.needed) && !s.closed {
			s.busy = false
			s.fed.Broadcast()
			s.pmu.Unlock()
			<-s.wake
			s.pmu.Lock()
		}
		if s.closed {
			s.busy = false
			s.fed.Broadcast()
			s.pmu.Unlock()
			return
		}
		if s.flooding {
			s.flooding = false
			s.busy = true
			s.pmu.Unlock()
			s.pause(floodPause)
			s.pmu.Lock()
		} else if !s.urgent && len(s.pending) < lazyBytes {
			s.busy = true
			s.pmu.Unlock()
			s.pause(lazyDelay)
			s.pmu.Lock()
		}
		batch := s.pending
		s.pending = nil
		alt := s.alt
		s.alt = -1
		switches := s.switches
		s.urgent = false
		s.busy = true
		s.pmu.Unlock()

		s.interpret(batch, alt, switches)
	}
}

// interpret has the emulator interpret batch, taken from the pending output with alt and
// switches (see noteAlt and Screen.switches).
func (s *Screen) interpret(batch []byte, alt, switches int) {
	s.mu.Lock()
	em := s.emulator()
	if alt >= 0 && (alt == 1) != em.IsAltScreen() {
		seq := altOff[0]
		if alt == 1 {
			seq = altOn[0]
		}
		_, _ = em.Write(seq)
	}
	_, _ = em.Write(capRepeats(batch, s.rows, s.cols))
	onAlt := em.IsAltScreen()
	s.mu.Unlock()
	s.pmu.Lock()
	s.onAlt = onAlt
	s.switches -= switches
	s.pmu.Unlock()
}

// escapes is what a piece of output holds that the screen must know of before the
// emulator has interpreted it.
type escapes struct {
	switches bool // it may switch between the normal and the alternate screen
	asks     bool // it may ask the terminal something (a query the program waits on)
	// open is where the escape sequence it ends inside begins, which the next piece
	// completes; -1 if none.
	open int
}

// scan looks for escapes in p: private modes 47, 1047 and 1049 set or reset and full
// resets (ESC c) switch screens; control sequences ending in c, n, q, t, u or $p, OSC
// strings with a "?", DCS strings and ESC Z may ask for an answer.
func scan(p []byte) escapes {
	e := escapes{open: -1}
	for i := bytes.IndexByte(p, 0x1b); i >= 0; {
		rest := p[i+1:]
		if len(rest) == 0 {
			e.open = i
			return e
		}
		switch rest[0] {
		case 'c':
			e.switches = true
		case 'Z', 'P':
			e.asks = true
		case ']':
			// An OSC string asks for an answer with a "?" (colour queries); most set a
			// title, which asks nothing.
			end := bytes.IndexAny(rest, "\x07\x1b")
			if end < 0 {
				e.open = i
				return e
			}
			e.asks = e.asks || bytes.IndexByte(rest[:end], '?') >= 0
		case '[':
			end := 1
			for end < len(rest) && rest[end] >= 0x20 && rest[end] <= 0x3f {
				end++ // parameter and intermediate bytes
			}
			if end == len(rest) {
				e.open = i
				return e
			}
			final, params := rest[end], rest[1:end]
			switch {
			case bytes.IndexByte([]byte("cnqtu"), final) >= 0, final == 'p' && bytes.HasSuffix(params, []byte("$")):
				e.asks = true
			case (final == 'h' || final == 'l') && len(params) > 0 && params[0] == '?':
				for param := range strings.SplitSeq(string(params[1:]), ";") {
					e.switches = e.switches || param == "47" || param == "1047" || param == "1049"
				}
			}
		}
		next := bytes.IndexByte(rest, 0x1b)
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return e
}

// pause waits d, or until someone waits for the screen or output needs interpreting.
func (s *Screen) pause(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.want:
	}
}

// answer passes what the terminal sends (answers to queries, keys) to the command, as
// much of it as the terminal's input takes at once; the rest is dropped. It reads on
// until the screen is closed, so that the emulator never waits for it.
func (s *Screen) answer() {
	buf := make([]byte, 4096)
	for {
		n, err := s.em.Read(buf)
		if n > 0 {
			s.deliver(buf[:n], 0)
		}
		if err != nil {
			return
		}
	}
}

// Attach sends what is typed at the screen to in, the master side of the command's
// pseudo-terminal, which must be non-blocking. Until it is attached, and once the screen
// is closed, what is typed and the answers to queries go nowhere.
func (s *Screen) Attach(in *os.File) { s.in.Store(in) }

// deliver writes p to the terminal's input, trying again for up to wait while the input
// is full; what does not fit by then is dropped, and counted as lost. Each try is one
// write system call: a full pseudo-terminal can poll as writable while a write finds no
// room, which Go's poller would retry at once, over and over.
func (s *Screen) deliver(p []byte, wait time.Duration) {
	in := s.in.Load()
	if in == nil {
		return
	}
	rc, err := in.SyscallConn()
	if err != nil {
		return
	}
	deadline := time.Now().Add(wait)
	pause := retryFirst
	for len(p) > 0 {
		var n int
		var werr error
		if rc.Write(func(fd uintptr) bool {
			n, werr = unix.Write(int(fd), p)
			return true // one try; never the poller's wait
		}) != nil {
			break // the terminal is closed
		}
		if n > 0 {
			p = p[n:]
			continue
		}
		if werr == unix.EINTR {
			continue
		}
		if werr != unix.EAGAIN || !time.Now().Add(pause).Before(deadline) || s.in.Load() != in {
			break
		}
		time.Sleep(pause)
		pause = min(2*pause, retryMost)
	}
	if len(p) > 0 {
		s.pmu.Lock()
		s.lost += int64(len(p))
		s.pmu.Unlock()
	}
}

// Type sends text to the command as typed at the terminal, then presses keys. It
// returns [ErrInputBlocked] when some of what earlier calls typed was not taken.
func (s *Screen) Type(text []byte, keys []Key) error {
	if len(text) > 0 {
		// Straight to the terminal: keys, which need the emulator's modes to be spelled,
		// follow through it.
		s.deliver(text, writeTimeout)
	}
	if len(keys) > 0 {
		s.flush() // a key's bytes depend on modes the program set (application cursor keys)
		s.mu.Lock()
		em := s.emulator()
		for _, k := range keys {
			em.SendKey(k.event())
		}
		// The emulator's pipe hands over each write whole to answer, which delivers it
		// before it reads again: an empty write returns once the keys are delivered, so
		// that they come before whatever is typed or closed next.
		_, _ = em.InputPipe().Write(nil)
		s.mu.Unlock()
	}
	s.pmu.Lock()
	lost := s.lost
	s.lost = 0
	s.pmu.Unlock()
	if lost > 0 {
		return ErrInputBlocked
	}
	return nil
}

// Alt reports whether the program draws on the alternate screen, as full-screen
// programs do, once the output handed to the screen is interpreted.
func (s *Screen) Alt() bool {
	s.pmu.Lock()
	known, onAlt := s.switches == 0, s.onAlt
	s.pmu.Unlock()
	if known {
		return onAlt // whatever is still to be interpreted leaves the screen as it is
	}
	s.flush()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emulator().IsAltScreen()
}

// flush has the emulator interpret the output handed to the screen, and waits until it
// has. Once the screen is closed, it interprets what is left itself.
func (s *Screen) flush() {
	s.need()
	select {
	case s.want <- struct{}{}:
	default:
	}
	s.pmu.Lock()
	for (len(s.pending) > 0 || s.busy) && !s.closed {
		s.fed.Wait()
	}
	for s.busy { // closed while the feeder interprets: it is about to stop
		s.fed.Wait()
	}
	if !s.closed || len(s.pending) == 0 {
		s.pmu.Unlock()
		return
	}
	batch, alt, switches := s.pending, s.alt, s.switches
	s.pending, s.alt = nil, -1
	s.pmu.Unlock()
	s.interpret(batch, alt, switches)
}

// Snapshot is the screen at one moment.
type Snapshot struct {
	Lines    []string // the visible lines, trailing spaces removed
	Row, Col int      // the cursor, from 0
	Alt      bool     // the program draws on the alternate screen (a full-screen program)
	Skipped  bool     // output came faster than it could be shown, and some was skipped
}

// Snapshot waits until the output handed to the screen is interpreted, and returns the
// screen.
func (s *Screen) Snapshot() Snapshot {
	s.flush()
	s.pmu.Lock()
	skipped := s.skipped
	s.skipped = false
	s.pmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	em := s.emulator()
	pos := em.CursorPosition()
	lines := strings.Split(em.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return Snapshot{Lines: lines, Row: pos.Y, Col: pos.X, Alt: em.IsAltScreen(), Skipped: skipped}
}

// Text is the screen as text: its lines up to the last that is not blank, or the
// cursor's line if that is further down.
func (sn Snapshot) Text() string {
	end := len(sn.Lines)
	for end > 0 && end-1 > sn.Row && sn.Lines[end-1] == "" {
		end--
	}
	return strings.Join(sn.Lines[:end], "\n") + "\n"
}

// Close stops the screen once the output handed to it is interpreted, if it was needed;
// what it shows then can still be had. The program has ended, or is being ended: from
// now on nothing reaches its terminal, the answers to what it asked included, so that
// interpreting what it left (at most maxPending) never waits on it.
func (s *Screen) Close() {
	s.in.Store(nil)
	s.pmu.Lock()
	needed := s.needed
	s.pmu.Unlock()
	if needed {
		s.flush()
	}
	s.pmu.Lock()
	if s.closed {
		s.pmu.Unlock()
		return
	}
	s.closed = true
	s.fed.Broadcast()
	s.pmu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	select {
	case s.want <- struct{}{}:
	default:
	}
	// Closing the emulator's own pipe, not the emulator: Emulator.Close sets a flag that
	// its Read, blocked in answer, reads without a lock.
	s.mu.Lock()
	if s.em != nil {
		_ = s.em.InputPipe().(*io.PipeWriter).CloseWithError(io.EOF)
	}
	s.mu.Unlock()
	s.wg.Wait()
}
