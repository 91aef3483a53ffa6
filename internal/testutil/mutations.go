package testutil

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// MutationSetup makes the tree every [Mutations] script starts from: line endings, a byte
// order mark, a file without a final newline, nested folders, an executable, a symlink,
// an empty folder, all committed to a git repository.
const MutationSetup = `
printf 'alpha\r\nbeta\r\n' > crlf.txt
printf '\xef\xbb\xbfbom line\n' > bom.txt
printf 'no newline' > plain.txt
mkdir -p src/pkg && printf 'package pkg\n' > src/pkg/a.go && printf 'x\n' > src/b.txt
printf '#!/bin/sh\necho hi\n' > run.sh && chmod 755 run.sh
ln -s plain.txt link
mkdir empty
git init -q . && git add -A && git -c user.name=t -c user.email=t@t commit -qm setup
`

// Mutations are what commands do to a tree that a checkpoint must undo byte for byte: each
// runs in a tree made by [MutationSetup].
var Mutations = []struct{ Name, Script string }{
	{"sed -i", `sed -i 's/alpha/ALPHA/' crlf.txt`},
	{"heredoc", "cat > new.txt <<'EOF'\nmade\nby heredoc\nEOF"},
	{"redirect truncates", `: > plain.txt`},
	{"append", `echo more >> bom.txt`},
	{"rm -rf", `rm -rf src`},
	{"rm -rf everything", `rm -rf ./[!.]* ./.[!.g]* 2>/dev/null || true`},
	{"mv file", `mv plain.txt moved.txt`},
	{"mv directory", `mv src lib`},
	{"mv over", `mv bom.txt crlf.txt`},
	{"cp -r", `cp -r src src2`},
	{"chmod", `chmod 600 run.sh && chmod 700 src`},
	{"symlink swap", `ln -sfn crlf.txt link`},
	{"symlink to directory", `rm link && ln -s src link`},
	{"file replaced by folder", `rm plain.txt && mkdir plain.txt && echo in > plain.txt/inner`},
	{"folder replaced by file", `rm -rf src && echo now a file > src`},
	{"mkdir -p deep", `mkdir -p a/b/c/d && echo deep > a/b/c/d/e.txt`},
	{"touch empty file", `touch empty/new`},
	{"rmdir", `rmdir empty`},
	{"same size same time", `printf 'ALPHA\r\nbeta\r\n' > x && touch -r crlf.txt x && mv x crlf.txt`},
	{"binary", `head -c 3000 /dev/urandom > blob.bin`},
	{"many files", `for i in $(seq 1 300); do echo $i > src/f$i; done`},
	{"truncate", `truncate -s 2 crlf.txt`},
	{"setuid bit", `chmod 4755 run.sh`},
	{"dangling symlink", `ln -s nowhere dangling`},
	{"rename chain", `mv crlf.txt t && mv bom.txt crlf.txt && mv t bom.txt`},
	{"git checkout .", `echo work > src/b.txt && echo more > plain.txt && git checkout -q . && echo after > crlf.txt`},
	{"git stash", `echo uncommitted > src/b.txt && echo new > untracked.txt && git stash -q -u`},
	{"overwrite in place", `printf 'BETA' | dd of=crlf.txt bs=1 seek=7 conv=notrunc status=none`},
	{"tar extracts", `mkdir vendor && tar cf - src run.sh | tar xpf - -C vendor && rm src/b.txt`},
	{"find -delete", `find . -path ./.git -prune -o -name '*.txt' -print | xargs rm -f`},
	{"line endings converted", `sed -i 's/\r$//' crlf.txt && sed -i '1s/^\xef\xbb\xbf//' bom.txt`},
}

// Tree describes every path under root but .git: a file's mode and content (as a SHA-256
// and size), a folder's mode, a symlink's target.
func Tree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if d.Name() == ".git" && d.IsDir() {
			return filepath.SkipDir
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		const modeBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link -> " + target
		case info.IsDir():
			out[rel] = fmt.Sprintf("dir %v", info.Mode()&modeBits)
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("file %v %d %x", info.Mode()&modeBits, len(data), sha256.Sum256(data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
