//go:build !linux

package checkpoint

import (
	"io/fs"
	"os"
	"path/filepath"
)

// lstatAt is os.Lstat of name in the directory d.
func lstatAt(d *os.File, name string) (fs.FileInfo, error) {
	return os.Lstat(filepath.Join(d.Name(), name))
}

// statNode is what the baseline keeps of info to tell, later, whether the path changed:
// here only the modification time.
func statNode(info fs.FileInfo) *node {
	return &node{mtime: info.ModTime().UnixNano()}
}
