package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Modes of confinement, as --confine-bash takes them.
const (
	Auto = "auto" // confine when there are allowed directories and the kernel can
	On   = "on"   // confine, or refuse to start
	Off  = "off"  // never confine
)

// errNoSeccomp says that commands cannot be kept from network protocols other than TCP
// here: the seccomp filter that does it is written for amd64 and arm64 alone.
var errNoSeccomp = errors.New("--confine-network: Boris can keep commands from network protocols other than TCP only on amd64 and arm64, not on " + runtime.GOARCH)

// ErrClosed is returned by [Domain.ForkExec] once the Domain is closed.
var ErrClosed = errors.New("confinement domain is closed")

// ErrLauncherLost says that a session's launcher ended while it was starting a command,
// which may or may not have started.
var ErrLauncherLost = errors.New("the launcher of this session's confined commands ended (was it killed?) while starting the command, which may or may not have started; check, then run it again if needed: a new launcher starts with the next command")

// Options say what a [Policy] should allow.
type Options struct {
	Mode string // Auto, On or Off
	// Dirs are the allowed directories: commands may read, write and run programs
	// beneath them. Without any, Auto confines no paths.
	Dirs []string
	// Write and Read are more paths commands may read, write and run beneath, or only
	// read and run beneath (--confine-write, --confine-read).
	Write, Read []string
	// Network forbids TCP connections and listening on TCP ports.
	Network bool
	// MaxABI caps the Landlock ABI used, as on an older kernel: 0 means no cap, and a
	// negative value acts as a kernel without Landlock.
	MaxABI int
	// Getenv reads the environment commands start with: PATH and GOROOT to find the Go
	// and Node toolchains, HOME and XDG_CONFIG_HOME to find git's configuration. Nil reads
	// nothing.
	Getenv func(string) string
}

// erratumSignal is set in the Landlock errata of a kernel that lets a thread in a domain
// signal the other threads of its process.
const erratumSignal = 1 << 1

// Access rights of a path rule.
type access int

const (
	readExec  access = iota // read files, list directories, run programs
	readWrite               // all of readExec, and create, write, remove, rename, link
	readOnly                // read files and list directories, nothing run
	device                  // read and write an existing device file
	list                    // list directories, nothing read
)

// rule gives access to a path and everything beneath it.
type rule struct {
	path   string
	access access
}

// Policy is the confinement decided at startup. It is immutable and safe for concurrent use.
type Policy struct {
	abi     int  // the Landlock ABI in use
	paths   bool // file system access is confined
	network bool // TCP connect and bind are forbidden
	// scopeUnix and scopeSignal keep commands from reaching abstract UNIX sockets and
	// signalling processes outside their own domain (Landlock ABI 6).
	scopeUnix, scopeSignal bool
	why                    string // why paths are not confined, when they are not
	rules                  []rule // what confined commands may reach, besides their session's own paths
}

// systemReadExec are the places a shell and its tools need to read and run from.
var systemReadExec = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc", "/sys"}

// systemDevices are the harmless devices commands may open.
var systemDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// New decides the confinement o asks for on this kernel. It refuses what the kernel cannot
// do when o.Mode is [On], or when o.Network is set.
func New(o Options) (*Policy, error) {
	p, err := decide(o)
	if err != nil || !p.paths {
		// Not confined, or network confinement alone: nothing is said about paths.
		return p, err
	}
	p.addRules(o)
	return p, nil
}

// decide returns the Policy o asks for on this kernel, without its rules: which ABI is
// used, and whether paths, the network and signals are confined.
func decide(o Options) (*Policy, error) {
	abi := kernelABI()
	why := unsupported()
	if o.MaxABI != 0 && abi > max(o.MaxABI, 0) {
		abi = max(o.MaxABI, 0)
		why = fmt.Sprintf("Landlock is capped at ABI %d by --landlock-abi", abi)
	}
	p := &Policy{abi: abi}
	switch o.Mode {
	case Off:
		if o.Network {
			return nil, errors.New("--confine-network needs --confine-bash auto or on: commands that are not confined can reach the network")
		}
		p.why = "--confine-bash=off"
		return p, nil
	case Auto, On:
	case "":
		o.Mode = Auto
	default:
		return nil, fmt.Errorf("--confine-bash %q: use auto, on or off", o.Mode)
	}
	p.paths = len(o.Dirs) > 0
	switch {
	case o.Mode == On && !p.paths:
		return nil, errors.New("--confine-bash=on confines commands to the --allow-dir directories: give at least one --allow-dir")
	case o.Mode == On && abi < 1:
		return nil, fmt.Errorf("--confine-bash=on: commands cannot be confined: %s; use --confine-bash=auto to run them unconfined, or run Boris in a container", why)
	case o.Network && abi < 4:
		return nil, fmt.Errorf("--confine-network: this kernel cannot forbid TCP to commands (%s; Landlock ABI 4, Linux 6.7, is needed)", describe(abi, why))
	case o.Network && !canFilterNetwork():
		return nil, errNoSeccomp
	case !p.paths:
		p.why = "no --allow-dir"
	case abi < 1:
		p.paths = false
		p.why = why
	}
	p.network = o.Network
	if p.Confined() && abi >= 6 {
		p.scopeUnix = true
		// Before the fix for this erratum, a thread in a domain could not signal the other
		// threads of its own process, which the Go runtime does.
		p.scopeSignal = kernelErrata()&erratumSignal != 0
	}
	return p, nil
}

// addRules adds what confined commands may reach, besides their session's own paths.
func (p *Policy) addRules(o Options) {
	for _, d := range append(slices.Clone(o.Dirs), o.Write...) {
		p.add(filepath.Clean(d), readWrite)
	}
	for _, d := range systemReadExec {
		p.add(d, readExec)
	}
	for _, d := range toolchains(o) {
		if !p.covered(d) {
			p.add(d, readExec)
		}
	}
	// On many systems /etc/resolv.conf links into /run; without its target commands could
	// not look up a host name.
	if real, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && !p.covered(real) {
		p.add(real, readOnly)
	}
	// git reads the user's configuration and fails when it may not.
	for _, f := range gitConfig(o.Getenv) {
		if !p.covered(f) {
			p.add(f, readOnly)
		}
	}
	for _, d := range o.Read {
		p.add(filepath.Clean(d), readExec)
	}
	// Landlock cannot allow listing / without listing what lies beneath, so directories
	// can be listed everywhere, but only the files above can be read.
	p.add("/", list)
	for _, d := range systemDevices {
		p.add(d, device)
	}
}

// add adds a rule giving access a to path, unless path is relative, does not exist, or
// has that rule already.
func (p *Policy) add(path string, a access) {
	if path == "" || !filepath.IsAbs(path) {
		return
	}
	if _, err := os.Stat(path); err != nil {
		return
	}
	if slices.Contains(p.rules, rule{path, a}) {
		return
	}
	p.rules = append(p.rules, rule{path, a})
}

// covered reports whether path lies beneath a rule that lets commands read and run it.
func (p *Policy) covered(path string) bool {
	for _, r := range p.rules {
		if (r.access == readExec || r.access == readWrite) && within(path, r.path) {
			return true
		}
	}
	return false
}

func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// gitConfig returns where git looks for the user's configuration.
func gitConfig(getenv func(string) string) []string {
	if getenv == nil {
		return nil
	}
	var files []string
	home := getenv("HOME")
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	if xdg := getenv("XDG_CONFIG_HOME"); xdg != "" {
		files = append(files, filepath.Join(xdg, "git"))
	} else if home != "" {
		files = append(files, filepath.Join(home, ".config", "git"))
	}
	return files
}

// toolchains returns the installation directories of the Go and Node toolchains found
// on the server's PATH (GOROOT for Go): a program found at PREFIX/bin/NAME gives PREFIX.
func toolchains(o Options) []string {
	if o.Getenv == nil {
		return nil
	}
	var dirs []string
	if root := o.Getenv("GOROOT"); root != "" {
		if real, err := filepath.EvalSymlinks(root); err == nil {
			dirs = append(dirs, real)
		}
	}
	for _, name := range []string{"go", "node"} {
		path := lookPath(name, o.Getenv("PATH"))
		if path == "" {
			continue
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			continue
		}
		dir := filepath.Dir(real)
		if filepath.Base(dir) == "bin" {
			dir = filepath.Dir(dir)
		}
		if dir != "/" {
			dirs = append(dirs, dir)
		}
	}
	return dirs
}

// lookPath finds the executable name in the directories of path, as a shell would; it
// returns "" if there is none.
func lookPath(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// CanRead reports whether confined commands may read the file at path (as Landlock sees
// it, beneath its real path), through the rules decided at startup: false when commands
// are not confined to paths, which says nothing of what unconfined commands may read.
func (p *Policy) CanRead(path string) bool {
	if !p.paths {
		return false
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	} else if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	for _, r := range p.rules {
		if r.access != list && within(path, r.path) {
			return true
		}
	}
	return false
}

// ABI returns the Landlock ABI version in use: 0 when Landlock is not available.
func (p *Policy) ABI() int { return p.abi }

// Why says why commands are not confined to paths, or returns "" when they are.
func (p *Policy) Why() string {
	if p.paths {
		return ""
	}
	return p.why
}

// Paths reports whether commands are confined to paths.
func (p *Policy) Paths() bool { return p.paths }

// Network reports whether commands are kept from TCP.
func (p *Policy) Network() bool { return p.network }

// Signals reports whether commands are kept from signalling processes outside their
// session's commands (Landlock ABI 6).
func (p *Policy) Signals() bool { return p.scopeSignal }

// Confined reports whether commands run confined in any way, so that each needs a
// [Domain].
func (p *Policy) Confined() bool { return p.paths || p.network }

// Writable returns the paths confined commands may write beneath, besides their session's
// temporary directory.
func (p *Policy) Writable() []string { return p.rulePaths(readWrite) }

// Readable returns the paths confined commands may only read, and run programs, beneath.
func (p *Policy) Readable() []string {
	return append(p.rulePaths(readExec), p.rulePaths(readOnly)...)
}

// Devices returns the device files confined commands may open.
func (p *Policy) Devices() []string { return p.rulePaths(device) }

func (p *Policy) rulePaths(a access) []string {
	var out []string
	for _, r := range p.rules {
		if r.access == a {
			out = append(out, r.path)
		}
	}
	return out
}

// String describes the confinement in one line, for the startup log.
func (p *Policy) String() string {
	var parts []string
	if p.paths {
		parts = append(parts, fmt.Sprintf("read-write %s and a private TMPDIR; read-only %s; devices %s; directory listings everywhere",
			strings.Join(p.Writable(), ","), strings.Join(p.Readable(), ","), strings.Join(p.Devices(), ",")))
	} else {
		parts = append(parts, "paths not confined ("+p.why+")")
	}
	if p.network {
		parts = append(parts, "no TCP connect or bind, and no sockets but UNIX, netlink, TCP and UDP ones")
	}
	if p.scopeSignal {
		parts = append(parts, "no signals outside the session")
	}
	if p.scopeUnix {
		parts = append(parts, "no abstract UNIX sockets outside the session")
	}
	return strings.Join(parts, "; ")
}

// KernelABI returns the Landlock ABI version this kernel offers: 0 when it has none.
func KernelABI() int { return kernelABI() }

// Describe returns what the kernel offers, for --version and the startup log: the
// Landlock ABI version, or why there is none.
func Describe() string { return describe(kernelABI(), unsupported()) }

func describe(abi int, why string) string {
	if abi < 1 {
		return "no Landlock: " + why
	}
	return fmt.Sprintf("Landlock ABI %d", abi)
}
