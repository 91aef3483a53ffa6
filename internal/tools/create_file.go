package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mjkoo/boris/internal/files"
	"github.com/mjkoo/boris/internal/session"
)

// CreateFileArgs are the arguments of create_file.
type CreateFileArgs struct {
	Path    string `json:"path" jsonschema:"File to create or overwrite: an absolute path, or relative to the working directory."`
	Content string `json:"content" jsonschema:"The whole content of the file, written exactly as given."`
}

const createFileDescription = "Create a file, or overwrite an existing file completely, with the given content.\n\n" +
	"Missing parent directories are created. An existing file keeps its mode; a new file gets mode 0644 (less the umask). " +
	"The content is written exactly as given, atomically: the file is never left half-written. The result says how many bytes were written.\n\n" +
	"To change part of an existing file, use str_replace instead."

func addCreateFile(s *mcp.Server, h *handlers) {
	addTool(s, h, &mcp.Tool{
		Name:        "create_file",
		Title:       "Create or overwrite a file",
		Description: createFileDescription + ifViewRule(h, " A file written here can be edited with str_replace without viewing it first.", ""),
		InputSchema: schemaOf[CreateFileArgs](),
		Annotations: &mcp.ToolAnnotations{Title: "Create or overwrite a file", DestructiveHint: new(true), IdempotentHint: true, OpenWorldHint: new(false)},
	}, h.createFile)
}

func (h *handlers) createFile(_ context.Context, req *mcp.CallToolRequest, in CreateFileArgs) (*mcp.CallToolResult, any, error) {
	sess, err := h.session(req)
	if err != nil {
		return nil, nil, err
	}
	s, err := h.create(sess, in.Path, in.Content)
	if err != nil {
		return nil, nil, err
	}
	return text(s), nil, nil
}

// create is create_file, shared with str_replace_editor.
func (h *handlers) create(sess *session.Session, path, content string) (string, error) {
	// Resolving cleans the path, so a trailing slash would otherwise name a file.
	if strings.HasSuffix(path, "/") {
		return "", errorf(CodeInvalidArgument, "path %s ends with a slash: give a file path (for example %sfile.txt), not a directory", path, path)
	}
	abs, err := sess.ResolveWrite(path)
	if err != nil {
		return "", err
	}
	data := []byte(content)
	c, err := files.Create(sess.OpenWrite, abs, data, h.Config.MaxFileSize, h.Config.AnthropicCompat)
	if err != nil {
		return "", h.fileError(err, path, sess)
	}
	if !c.Existed || c.OldKept || !h.Config.AnthropicCompat {
		h.wrote(sess, abs, c.Old, c.Existed, data)
	} else {
		// Too large to keep for undo: record the write as seen, but leave no undo entry.
		sess.MarkSeen(abs, files.ContentDigest(data))
		sess.Remember(abs, data)
	}
	switch {
	case c.Existed && c.ModeLost != "":
		return fmt.Sprintf("Overwrote %s: wrote %s; %s.", abs, byteCount(int64(c.Bytes)), c.ModeLost) + heldNote(c.Held), nil
	case c.Existed:
		return fmt.Sprintf("Overwrote %s: wrote %s (mode %s kept).", abs, byteCount(int64(c.Bytes)), files.Octal(c.Mode)) + heldNote(c.Held), nil
	}
	return fmt.Sprintf("Created %s: wrote %s (mode %s).", abs, byteCount(int64(c.Bytes)), files.Octal(c.Mode)), nil
}
