package files

import (
	"fmt"
	"strings"
)

// The patch format of Codex's apply_patch tool: an envelope of file operations, each
// adding, deleting or updating one file, updates made of chunks of context, removed and
// added lines. [ParsePatch] reads it; [ApplyPatch] applies it to the files, all or nothing.
//
//	*** Begin Patch
//	*** Add File: hello.txt
//	+Hello world
//	*** Update File: src/app.py
//	*** Move to: src/main.py
//	@@ def greet():
//	-print("Hi")
//	+print("Hello, world!")
//	*** Delete File: obsolete.txt
//	*** End Patch
//
// As Codex's own parser does, it allows whitespace around the markers, a patch wrapped in
// a heredoc (<<'EOF' ... EOF), CRLF line endings, and a first chunk without "@@".

// Patch markers.
const (
	beginPatch  = "*** Begin Patch"
	endPatch    = "*** End Patch"
	addFile     = "*** Add File: "
	deleteFile  = "*** Delete File: "
	updateFile  = "*** Update File: "
	moveTo      = "*** Move to: "
	endOfFile   = "*** End of File"
	chunkMarker = "@@"
)

// OpKind is what a patch operation does to its file.
type OpKind int

// Operations of a patch.
const (
	OpAdd OpKind = iota
	OpDelete
	OpUpdate
)

// Patch is a parsed patch: its file operations in order.
type Patch struct {
	Ops []PatchOp
}

// PatchOp is one file operation of a patch.
type PatchOp struct {
	Kind    OpKind
	Path    string // as written in the patch
	MoveTo  string // an update's new path, or ""
	Content string // an added file's content: its lines, each ending in "\n"
	Chunks  []Chunk
	Line    int // the patch line of the operation's header, from 1
}

// Header is the operation's header line, as the patch has it.
func (op *PatchOp) Header() string {
	switch op.Kind {
	case OpAdd:
		return addFile + op.Path
	case OpDelete:
		return deleteFile + op.Path
	}
	return updateFile + op.Path
}

// Chunk is one change of an update: lines Old, found after the line Context (when set),
// become lines New.
type Chunk struct {
	Context string   // the text after "@@ ", or ""
	Old     []string // context and removed lines, without their prefix
	New     []string // context and added lines, without their prefix
	EOF     bool     // Old must be at the end of the file ("*** End of File")
	Line    int      // the patch line where the chunk starts, from 1
}

// PatchError is the [ErrInvalid] of text that is not a patch; Line is the patch line at
// fault, or 0 when the envelope is.
type PatchError struct {
	Line int
	Msg  string
}

func (e *PatchError) Error() string {
	if e.Line == 0 {
		return "invalid patch: " + e.Msg
	}
	return fmt.Sprintf("invalid hunk at line %d, %s", e.Line, e.Msg)
}

// Is reports that a PatchError is an [ErrInvalid].
func (e *PatchError) Is(target error) bool { return target == ErrInvalid }

// ParsePatch reads a patch in the apply_patch format.
func ParsePatch(text string) (*Patch, error) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	body, err := envelope(lines)
	if err != nil {
		body, err = heredoc(lines, err)
		if err != nil {
			return nil, err
		}
	}
	p := &Patch{}
	for n := 2; len(body) > 0; {
		op, used, err := parseOp(body, n)
		if err != nil {
			return nil, err
		}
		p.Ops = append(p.Ops, op)
		body, n = body[used:], n+used
	}
	return p, nil
}

// envelope returns the lines between "*** Begin Patch" and "*** End Patch".
func envelope(lines []string) ([]string, error) {
	if strings.TrimSpace(lines[0]) != beginPatch {
		return nil, &PatchError{Msg: "The first line of the patch must be '*** Begin Patch'"}
	}
	if len(lines) < 2 || strings.TrimSpace(lines[len(lines)-1]) != endPatch {
		return nil, &PatchError{Msg: "The last line of the patch must be '*** End Patch'"}
	}
	return lines[1 : len(lines)-1], nil
}

// heredoc returns the envelope's body of a patch wrapped in a heredoc, as some models
// write it, or err, the error of the patch as it is.
func heredoc(lines []string, err error) ([]string, error) {
	switch lines[0] {
	case "<<EOF", "<<'EOF'", `<<"EOF"`:
	default:
		return nil, err
	}
	if len(lines) < 4 || !strings.HasSuffix(lines[len(lines)-1], "EOF") {
		return nil, err
	}
	return envelope(lines[1 : len(lines)-1])
}

// parseOp reads the file operation at the start of lines, the first of which is patch
// line n, and returns it with the number of lines it took.
func parseOp(lines []string, n int) (PatchOp, int, error) {
	header := strings.TrimSpace(lines[0])
	for _, h := range []struct {
		marker string
		kind   OpKind
	}{{addFile, OpAdd}, {deleteFile, OpDelete}, {updateFile, OpUpdate}} {
		path, ok := strings.CutPrefix(header, strings.TrimSpace(h.marker))
		if !ok || path != "" && path[0] != ' ' {
			continue
		}
		if path = strings.TrimSpace(path); path == "" {
			return PatchOp{}, 0, &PatchError{Line: n, Msg: fmt.Sprintf("'%s' names no file: write the path after the colon", header)}
		}
		op := PatchOp{Kind: h.kind, Path: path, Line: n}
		switch h.kind {
		case OpAdd:
			return op, 1 + op.addLines(lines[1:]), nil
		case OpUpdate:
			used, err := op.parseUpdate(lines[1:], n+1)
			return op, 1 + used, err
		}
		return op, 1, nil
	}
	return PatchOp{}, 0, &PatchError{Line: n, Msg: fmt.Sprintf(
		"'%s' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'", header)}
}

// addLines reads an added file's "+" lines and returns how many there were.
func (op *PatchOp) addLines(lines []string) int {
	var b strings.Builder
	n := 0
	for _, l := range lines {
		text, ok := strings.CutPrefix(l, "+")
		if !ok {
			break
		}
		b.WriteString(text)
		b.WriteByte('\n')
		n++
	}
	op.Content = b.String()
	return n
}

// parseUpdate reads an update's optional "*** Move to:" and its chunks from lines, the
// first of which is patch line n, and returns how many lines it took.
func (op *PatchOp) parseUpdate(lines []string, n int) (int, error) {
	used := 0
	if len(lines) > 0 {
		if to, ok := strings.CutPrefix(strings.TrimSpace(lines[0]), moveTo); ok {
			if op.MoveTo = strings.TrimSpace(to); op.MoveTo == "" {
				return 0, &PatchError{Line: n, Msg: "'*** Move to:' names no file: write the new path after the colon"}
			}
			used++
		}
	}
	for used < len(lines) {
		l := lines[used]
		if strings.TrimSpace(l) == "" {
			used++ // blank lines may separate chunks
			continue
		}
		if strings.HasPrefix(l, "*") {
			break
		}
		c, k, err := parseChunk(lines[used:], n+used, len(op.Chunks) == 0)
		if err != nil {
			return 0, err
		}
		op.Chunks = append(op.Chunks, c)
		used += k
	}
	if len(op.Chunks) == 0 {
		return 0, &PatchError{Line: n - 1, Msg: fmt.Sprintf("Update file hunk for path '%s' is empty", op.Path)}
	}
	return used, nil
}

// parseChunk reads one chunk at the start of lines, the first of which is patch line n.
// Only the first chunk of an update may leave out its "@@" line.
func parseChunk(lines []string, n int, first bool) (Chunk, int, error) {
	c := Chunk{Line: n}
	start := 1
	switch ctx, ok := strings.CutPrefix(lines[0], chunkMarker+" "); {
	case lines[0] == chunkMarker:
	case ok:
		c.Context = ctx
	case first:
		start = 0
	default:
		return c, 0, &PatchError{Line: n, Msg: fmt.Sprintf("Expected update hunk to start with a @@ context marker, got: '%s'", lines[0])}
	}
	k := 0
	for _, l := range lines[start:] {
		if l == endOfFile {
			if k == 0 {
				break
			}
			c.EOF = true
			k++
			break
		}
		if !c.addLine(l) {
			if k == 0 {
				return c, 0, &PatchError{Line: n + start, Msg: fmt.Sprintf("Unexpected line found in update hunk: '%s'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)", l)}
			}
			break // the next chunk, or the next operation
		}
		k++
	}
	if k == 0 {
		return c, 0, &PatchError{Line: n + start, Msg: "Update hunk does not contain any lines"}
	}
	return c, start + k, nil
}

// addLine adds a diff line to c, or reports that l is not one. An empty line is an empty
// context line.
func (c *Chunk) addLine(l string) bool {
	if l == "" {
		c.Old, c.New = append(c.Old, ""), append(c.New, "")
		return true
	}
	switch l[0] {
	case ' ':
		c.Old, c.New = append(c.Old, l[1:]), append(c.New, l[1:])
	case '-':
		c.Old = append(c.Old, l[1:])
	case '+':
		c.New = append(c.New, l[1:])
	default:
		return false
	}
	return true
}
