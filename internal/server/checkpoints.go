package server

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"

	"github.com/mjkoo/boris/internal/checkpoint"
)

// openCheckpoints opens the checkpoints of the workspace: the allowed directory that holds
// the working directory (else the first), or the working directory when nothing confines
// the file tools. They live in the state directory, under a name made from the root's
// path, so that a restarted Boris finds them. Nil when checkpoints are off or cannot be
// kept, which is logged once.
func (s *Server) openCheckpoints() *checkpoint.Tracker {
	if !s.cfg.Checkpoints || s.cfg.StateDir == "" {
		return nil
	}
	root := s.cfg.Workdir
	if roots := s.scope.Roots(); len(roots) > 0 {
		root = roots[0]
		for _, r := range roots {
			if s.cfg.Workdir == r || strings.HasPrefix(s.cfg.Workdir, r+"/") {
				root = r
				break
			}
		}
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	sum := sha256.Sum256([]byte(root))
	t, err := checkpoint.Open(checkpoint.Options{
		Root:        root,
		Dir:         filepath.Join(s.cfg.StateDir, "checkpoints", hex.EncodeToString(sum[:8])),
		MaxFileSize: s.cfg.CheckpointMaxFileSize,
		MaxStore:    s.cfg.CheckpointMaxStore,
		Keep:        s.cfg.CheckpointKeep,
		Logger:      s.log,
		// Reading the whole workspace at startup waits while a search runs, as the search
		// index's builds do (s.indexes is nil with --no-search-index, and then never waits).
		Yield: s.indexes.WaitForSearches,
	})
	if err != nil {
		s.log.Warn("checkpoints are off", "root", root, "err", err)
		return nil
	}
	return t
}
