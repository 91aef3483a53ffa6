package tools

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/search"
)

// OutputMode is what grep reports.
type OutputMode string

// GrepArgs are grep's parameters, named as in Claude Code's Grep.
type GrepArgs struct {
	Pattern    string     `json:"pattern" jsonschema:"Regular expression to search file contents for, in RE2 syntax (Go regexp: no lookaround or backreferences). Escape literal braces and parentheses, e.g. 'interface\\{\\}' or 'foo\\('."`
	Path       string     `json:"path,omitempty" jsonschema:"File or directory to search, absolute or relative to the working directory. Defaults to the working directory."`
	Glob       string     `json:"glob,omitempty" jsonschema:"Only search files whose path matches this glob, e.g. '*.js', '*.{ts,tsx}', 'src/**/*.go'. A glob without a slash matches file names at any depth. Several globs may be separated by spaces; a leading '!' excludes, e.g. '!*_test.go'."`
	Type       string     `json:"type,omitempty" jsonschema:"Only search files of this type; more efficient than glob for standard types. Types and their globs: TYPES."`
	OutputMode OutputMode `json:"output_mode,omitempty" jsonschema:"files_with_matches (default) lists matching files, newest first; content shows matching lines as path:line:text (supports -A, -B, -C, -n); count shows matching lines per file."`
	IgnoreCase bool       `json:"-i,omitempty" jsonschema:"Case-insensitive search."`
	LineNums   *bool      `json:"-n,omitempty" jsonschema:"Show line numbers in content mode. Defaults to true."`
	After      int        `json:"-A,omitempty" jsonschema:"Lines of context to show after each match (content mode)."`
	Before     int        `json:"-B,omitempty" jsonschema:"Lines of context to show before each match (content mode)."`
	Around     int        `json:"-C,omitempty" jsonschema:"Lines of context to show before and after each match (content mode)."`
	Context    int        `json:"context,omitempty" jsonschema:"Same as -C."`
	Multiline  bool       `json:"multiline,omitempty" jsonschema:"Let matches span lines: '.' matches newlines and \\n may appear in the pattern. Default false: each line is matched on its own."`
	HeadLimit  int        `json:"head_limit,omitempty" jsonschema:"Show at most this many entries (files, output lines or counts, depending on output_mode). Default: as many as fit the output budget."`
	Offset     int        `json:"offset,omitempty" jsonschema:"Skip this many entries first, to page through long results together with head_limit."`
	Hidden     bool       `json:"hidden,omitempty" jsonschema:"Also search hidden files and directories (names starting with '.'); .git is never searched."`
	// onlyMatching shows only the matched parts of lines (Claude Code's Grep -o).
	onlyMatching bool
	NoIgnore     bool `json:"no_ignore,omitempty" jsonschema:"Also search files excluded by .gitignore, .ignore and .git/info/exclude, and node_modules directories."`
}

const grepDescription = `Search file contents with a regular expression (RE2 syntax), like ripgrep. Searches the working directory by default, recursively, in parallel.

- Skips, and counts at the end of the result, hidden files, files excluded by .gitignore/.ignore, node_modules directories, binary files and files over the size limit; set hidden or no_ignore to include them. Every result ends with a line saying what was searched and what was not, so an empty result is real.
- output_mode: files_with_matches (default, paths newest first), content (path:line:text, with -A/-B/-C context; of a line over 500 bytes, the 500 bytes around its first match) or count.
- Each line is matched on its own unless multiline is true.
- Results are paged: head_limit and offset select entries; the note at the end says how to get more.
- Paths are shown relative to the working directory; a name with a control character (such as a newline) is quoted, Go-style: "a\nb.txt".`

var outputModes = []any{"files_with_matches", "content", "count"}

func addGrep(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "grep",
		Title:       "Search file contents",
		Description: grepDescription,
		InputSchema: schemaFunc(grepSchema),
		Annotations: &mcp.ToolAnnotations{Title: "Search file contents", ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, h.grep)
}

// grepSchema is GrepArgs' schema, with the file types listed in type's description.
func grepSchema() *jsonschema.Schema {
	schema := schemaFor[GrepArgs]()
	typ := schema.Properties["type"]
	typ.Description = strings.Replace(typ.Description, "TYPES", search.TypeTable(), 1)
	return schema
}

func (h *handlers) grep(ctx context.Context, req *mcp.CallToolRequest, in GrepArgs) (*mcp.CallToolResult, any, error) {
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	mode, err := checkGrepArgs(in)
	if err != nil {
		return nil, nil, err
	}
	root, shown, err := searchRoot(sess.Cwd(), in.Path, sess.Resolve)
	if err != nil {
		return nil, nil, err
	}
	around := max(in.Around, in.Context)
	before, after := max(in.Before, around), max(in.After, around)
	p := newPager(in.HeadLimit, in.Offset, h.contentBudget(ctx))
	p.maxLines = h.budget(ctx).Lines
	res, err := search.Grep(ctx, scopeOf(sess), root, search.GrepOptions{
		Filter:     h.filter(sess.Cwd(), in.Hidden, in.NoIgnore, strings.Fields(in.Glob), in.Type),
		Pattern:    in.Pattern,
		IgnoreCase: in.IgnoreCase,
		Multiline:  in.Multiline,
		Mode:       mode,
		Before:     before,
		After:      after,
		Keep:       p.keep(),
		MaxLine:    search.DefaultMaxLine,
		// -o picks the matched parts out of the whole line, not the part shown.
		OnlyMatching: in.onlyMatching,
		Indexes:      h.Indexes,
	})
	if err != nil {
		return nil, nil, h.searchError(err)
	}
	var b strings.Builder
	if res.MatchedFiles == 0 {
		what := "matches"
		if mode == search.FilesWithMatches {
			what = "files contain a match"
		}
		fmt.Fprintf(&b, "No %s for %s in %s\n", what, search.QuotePattern(in.Pattern), shown)
	} else {
		var only *regexp.Regexp
		if in.onlyMatching && mode == search.Content {
			only = onlyMatchingRE(in)
		}
		writeGrepResult(&b, res, mode, p, relativizer(sess.Cwd(), root, shown), in.LineNums == nil || *in.LineNums, before+after > 0 && only == nil, only)
	}
	b.WriteString(p.note())
	b.WriteString(skippedNote(res.Searched, "file", res.Skipped, h.Config.MaxFileSize, h.face()))
	if note := indexNote(res); note != "" {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(note)
	}
	return text(p.lead(b.String())), nil, nil
}

// checkGrepArgs refuses what the schema cannot, and returns the search mode.
func checkGrepArgs(in GrepArgs) (search.Mode, error) {
	if in.Pattern == "" {
		return 0, errorf(CodeInvalidArgument, "pattern is empty: give a regular expression (RE2 syntax) such as 'func \\w+Handler'")
	}
	if in.After < 0 || in.Before < 0 || in.Around < 0 || in.Context < 0 || in.HeadLimit < 0 || in.Offset < 0 {
		return 0, errorf(CodeInvalidArgument, "-A, -B, -C, context, head_limit and offset must not be negative")
	}
	mode, ok := map[OutputMode]search.Mode{
		"": search.FilesWithMatches, "files_with_matches": search.FilesWithMatches,
		"content": search.Content, "count": search.Count,
	}[in.OutputMode]
	if !ok {
		return 0, errorf(CodeInvalidArgument, "output_mode %q is not one of files_with_matches, content, count", in.OutputMode)
	}
	return mode, nil
}

// writeGrepResult writes the matches found, one page of them, in the mode asked for.
func writeGrepResult(b *strings.Builder, res *search.GrepResult, mode search.Mode, p *pager, rel func(string) string, lineNums, context bool, only *regexp.Regexp) {
	switch mode {
	case search.FilesWithMatches:
		fmt.Fprintf(b, "Found %s (newest first):\n", plural(res.MatchedFiles, "file"))
		p.total = res.MatchedFiles
		for _, f := range res.Files {
			if !p.add(b, rel(f.Path)+"\n") {
				break
			}
		}
	case search.Count:
		fmt.Fprintf(b, "Found %s in %s:\n", plural(res.MatchedLines, "matching line"), plural(res.MatchedFiles, "file"))
		p.total = res.MatchedFiles
		for _, f := range res.Files {
			if !p.add(b, fmt.Sprintf("%s:%d\n", rel(f.Path), f.Lines)) {
				break
			}
		}
	default:
		fmt.Fprintf(b, "Found %s in %s:\n", plural(res.MatchedLines, "matching line"), plural(res.MatchedFiles, "file"))
		total := 0
		for _, f := range res.Files {
			total += len(f.Output)
		}
		p.total = -1 // the search stopped collecting lines once the page was full
		if total < p.keep() {
			p.total = total // it collected every line, so the total is known
		}
		if only != nil {
			p.total = -1 // entries are matches, not lines: their number is not known
		}
		p.formatContent(b, res.Files, rel, lineNums, context, only)
	}
}

// formatContent writes content-mode lines in ripgrep's style: path:num:text for matches,
// path-num-text for context and, when there is context, "--" between groups that are not
// adjacent.
//
// With only, matching lines show each part only matches, one a line, and context lines
// are left out.
func (p *pager) formatContent(b *strings.Builder, files []search.FileMatch, rel func(string) string, nums, context bool, only *regexp.Regexp) {
	for fi, f := range files {
		path := rel(f.Path)
		for i, l := range f.Output {
			if only != nil {
				if !l.Match {
					continue
				}
				parts := l.Matches
				if parts == nil { // a line shown whole, or a multiline pattern's
					parts = only.FindAllString(l.Text, -1)
				}
				for _, m := range parts {
					if m == "" {
						continue
					}
					s := path + ":"
					if nums {
						s += strconv.Itoa(l.Num) + ":"
					}
					if !p.add(b, s+m+"\n") {
						return
					}
				}
				continue
			}
			sep := "-"
			if l.Match {
				sep = ":"
			}
			var line strings.Builder
			if context && p.shown > 0 && (l.Gap || i == 0 && fi > 0) {
				line.WriteString("--\n")
			}
			line.WriteString(path)
			line.WriteString(sep)
			if nums {
				fmt.Fprintf(&line, "%d%s", l.Num, sep)
			}
			if l.CutBefore > 0 {
				fmt.Fprintf(&line, "[line cut: %s before] … ", byteCount(int64(l.CutBefore)))
			}
			line.WriteString(l.Text)
			if l.Cut > 0 {
				fmt.Fprintf(&line, " … [line cut: %s after]", byteCount(int64(l.Cut)))
			}
			line.WriteByte('\n')
			if !p.add(b, line.String()) {
				return
			}
		}
	}
}

// onlyMatchingRE is the pattern as grep matched it, for picking out the matched parts of
// lines. The search already accepted the pattern, so it compiles.
func onlyMatchingRE(in GrepArgs) *regexp.Regexp {
	flags := ""
	if in.IgnoreCase {
		flags += "i"
	}
	if in.Multiline {
		flags += "s"
	}
	pat := in.Pattern
	if flags != "" {
		pat = "(?" + flags + ")" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return regexp.MustCompile(regexp.QuoteMeta(in.Pattern))
	}
	return re
}

// indexNote says how the search index served a result; nothing for a scan of every file.
func indexNote(res *search.GrepResult) string {
	kept := ""
	if res.Live {
		kept = ", kept fresh by file events"
	}
	switch res.Index {
	case search.Indexed:
		return "(from the search index" + kept + ": only files that can match were read)"
	case search.PartlyIndexed:
		return fmt.Sprintf("(from a partial search index%s: %s new or changed since indexing read in full)", kept, plural(res.Unindexed, "file"))
	}
	return ""
}
