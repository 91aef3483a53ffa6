package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/mjkoo/boris/internal/loopback"
)

// Config is the server's settings after parsing and validation. It is never modified after
// [Parse] returns it.
type Config struct {
	Transport string // "http" or "stdio"
	Host      string
	Port      int
	Workdir   string // absolute, existing directory
	Timeout   time.Duration

	// TransportWhy says why Boris chose Transport itself, when neither the command line
	// nor the environment named one; it is empty when they did.
	TransportWhy string

	AllowDirs []string // as given; pathscope makes them canonical
	DenyDirs  []string // plain directories or glob patterns (package glob)

	// ConfineBash says whether commands are confined to the allowed directories with
	// Landlock: "auto", "on" or "off" (see package confine). "" means "auto".
	ConfineBash    string
	ConfineRead    []string // absolute paths confined commands may also read
	ConfineWrite   []string // absolute directories confined commands may also write
	ConfineNetwork bool     // confined commands may not use TCP
	LandlockABI    int      // use at most this Landlock ABI: 0, what the kernel has; < 0, none

	NoBash       bool
	DisableTools []string
	MaxFileSize  int64
	// OutputBudget is the most characters one tool result shows of a command's output, a
	// file or a search; past it the result keeps a head and a tail and says where the rest
	// is. 0 (the default) fits each client's known limits (see package clients).
	OutputBudget          int
	AnthropicCompat       bool
	RequireViewBeforeEdit bool
	// Tools is the tool set offered: "boris" (Boris's own tools), "claude-code" (Claude
	// Code's names and parameters) or "codex" (Codex's), on the same implementation.
	Tools string
	// StructuredOutput adds structuredContent and outputSchema to the results that have a
	// structured form. Off by default: some clients show the model only the structured
	// form, which lacks the text's layout.
	StructuredOutput bool
	// ProgressDelay and ProgressInterval pace bash's progress notifications: none before
	// the command has run ProgressDelay, then at most one every ProgressInterval, and one
	// at least every ProgressQuiet while the command prints nothing. Zero means the
	// defaults; tests set them short.
	ProgressDelay, ProgressInterval, ProgressQuiet time.Duration

	Token          string
	TokenGenerated bool   // Token came from --generate-token
	TokenFile      string // the file Token was read from (--token-file), "~/" expanded
	// InitToken, from --init-token-file, authorises the one POST /init that sets Token
	// when Boris started without one (a warm pod claimed later).
	InitToken           string
	InitTokenFile       string
	AllowOrigins        []string
	InsecureNoAuth      bool // listen on a non-loopback address without a token
	MaxRequestBytes     int64
	MaxSessions         int
	SessionIdleTimeout  time.Duration
	Stateless           bool          // serve only stateless HTTP requests (no Mcp-Session-Id)
	StreamKeepAlive     time.Duration // interval of SSE comments that keep a running call's stream alive
	MaxBackgroundTasks  int
	BackgroundTaskLimit time.Duration // 0: background tasks run until killed or their session ends
	// MaxProcesses is the most processes and threads one command may have at once: 0 for
	// the default (shell.DefaultProcessLimit), negative for no limit.
	MaxProcesses int
	// TaskAfter is how long a foreground bash call runs before it becomes an MCP task, for
	// a request that declares the Tasks extension (0: never).
	TaskAfter time.Duration
	// TaskTTL is how long an MCP task's result is kept after it ended (0: the default).
	TaskTTL time.Duration
	// CallDeadline is when the client gives up on a tool call (0: as the client's profile
	// says, if it knows one; see package clients): a foreground
	// command still running shortly before it becomes a background task.
	CallDeadline time.Duration
	// RouterTimeout is the deadline a sandbox router puts on every request it forwards
	// (agent-sandbox's --proxy-timeout): a call that came through one (X-Sandbox-ID) has it
	// as its call deadline, unless CallDeadline is shorter.
	RouterTimeout time.Duration

	// KillGrace is how long a stopped command has between SIGTERM and SIGKILL.
	KillGrace time.Duration
	// OutputDrain is how long a command's output is still read after its shell exits,
	// while processes it left behind hold the pipes open.
	OutputDrain time.Duration
	// StdioDrain is how long requests already read may run on after a STDIO client closes
	// its end, before their commands are stopped.
	StdioDrain time.Duration

	// MaxSpillFile bounds the file holding one stream of a command's full output: past it
	// only its head and tail are kept.
	MaxSpillFile int64
	// MaxSpillTotal bounds the saved output one session keeps; the oldest files that no
	// one still needs are removed past it.
	MaxSpillTotal int64

	// StateDir is where Boris keeps what must outlive the process: checkpoints, and what a
	// restarted Boris knows of its workspaces and tasks. Absolute; made (mode 0700) by whoever
	// first writes there, never at start.
	StateDir string
	// StateDirGiven: --state-dir (or BORIS_STATE_DIR) was given, not defaulted. Only then
	// are workspaces kept across restarts, so that Boris servers (and tests) that share
	// the default directory do not take each other's.
	StateDirGiven bool
	// CacheDir is where Boris keeps what it can rebuild, such as search indexes. Absolute;
	// made (mode 0700) by whoever first writes there.
	CacheDir string
	// NoSearchIndex turns off the trigram indexes grep keeps of big trees.
	NoSearchIndex bool

	// Checkpoints says whether every call that changes files leaves a checkpoint (in
	// StateDir) that can be rewound; CheckpointMaxFileSize and CheckpointMaxStore bound the
	// files and the bytes kept; CheckpointKeep names ignored paths whose changes are kept.
	Checkpoints           bool
	CheckpointMaxFileSize int64
	CheckpointMaxStore    int64
	CheckpointKeep        []string

	LogLevel  slog.Level
	LogFormat string // "text" or "json"

	NoWatch   bool   // no live view at /watch
	WatchAddr string // stdio: where to serve the live view; "" for nowhere

	Shell   string // /bin/bash when present, else /bin/sh
	Version string
}

// Defaults for the durations Boris waits for processes; a zero [Config] field means these.
const (
	DefaultKillGrace   = 5 * time.Second
	DefaultOutputDrain = 250 * time.Millisecond
	DefaultStdioDrain  = 5 * time.Second
)

// Defaults for the bounds on saved output.
const (
	DefaultMaxSpillFile  = 64 << 20
	DefaultMaxSpillTotal = 1 << 30
)

// DefaultOutputBudget is the default [Config.OutputBudget]: none, so that each result
// fits the calling client's known limits (30,000 characters where the client allows
// them). MinOutputBudget leaves room for the notes themselves.
const (
	DefaultOutputBudget = 0
	MinOutputBudget     = 4_000
)

// DefaultStreamKeepAlive is how often a tool call's HTTP response stream carries a
// comment while the call runs, well inside the idle limits of clients and proxies.
const DefaultStreamKeepAlive = 15 * time.Second

// ErrExit reports that the command line asked for something that ends the program
// successfully without serving, such as --help or --version.
var ErrExit = errors.New("exit")

// ErrVersion reports that the command line asked for the version (--version), which the
// program prints; it is an [ErrExit].
var ErrVersion = fmt.Errorf("version: %w", ErrExit)

// cli is the command line, as [ParseFlags] reads it. Every flag names its environment
// variable in an envvar tag, read through the getenv given to [Parse] rather than the
// process environment. A "for" tag marks the settings only one transport uses: "http",
// or "http,watch" for those the live view's own listener in stdio mode (--watch) uses too.
type cli struct {
	Transport       string        `help:"Transport: http or stdio. Unset, it is http when a flag only HTTP uses is given (--port, --host, a token, ...), else stdio when stdin is a pipe (a client starting Boris), else http." default:"http" enum:"http,stdio" envvar:"BORIS_TRANSPORT"`
	Host            string        `for:"http" help:"Address to listen on (http). 0.0.0.0 listens on every interface, and needs a token." default:"127.0.0.1" envvar:"BORIS_HOST"`
	Port            int           `for:"http" help:"TCP port to listen on (http)." default:"8080" envvar:"BORIS_PORT"`
	Workdir         string        `help:"Initial working directory of every session." default:"." envvar:"BORIS_WORKDIR"`
	Timeout         time.Duration `help:"Default bash timeout: seconds, or a duration such as 90s or 10m (the bash tool's own timeout is in milliseconds)." default:"120" envvar:"BORIS_TIMEOUT"`
	AllowDir        []string      `help:"Confine file tools, and commands where the kernel has Landlock, to this directory (repeatable; relative to --workdir)." placeholder:"DIR" envvar:"BORIS_ALLOW_DIRS"`
	DenyDir         []string      `help:"Hide a path, a name at any depth (no slash, such as '.env') or a glob such as 'build/**/*.key' from file tools (repeatable; relative to --workdir)." placeholder:"DIR|PATTERN" envvar:"BORIS_DENY_DIRS"`
	ConfineBash     string        `help:"Confine commands to the --allow-dir directories with Landlock: auto (when --allow-dir is set and the kernel can), on (or refuse to start), off." default:"auto" enum:"auto,on,off" envvar:"BORIS_CONFINE_BASH"`
	ConfineRead     []string      `help:"Let confined commands also read and run programs beneath this path (repeatable)." placeholder:"PATH" envvar:"BORIS_CONFINE_READ"`
	ConfineWrite    []string      `help:"Let confined commands also write beneath this directory (repeatable)." placeholder:"DIR" envvar:"BORIS_CONFINE_WRITE"`
	ConfineNetwork  bool          `help:"Forbid commands TCP connections, listening on TCP ports and sockets of network protocols other than UDP (Landlock ABI 4, Linux 6.7 or later, and a seccomp filter on amd64 and arm64); refuse to start where the kernel cannot." envvar:"BORIS_CONFINE_NETWORK"`
	LandlockABI     int           `name:"landlock-abi" hidden:"" help:"Use at most this Landlock ABI version, as an older kernel would (0: what the kernel has; -1: as if there were no Landlock)." default:"0" envvar:"BORIS_LANDLOCK_ABI"`
	NoBash          bool          `help:"Do not offer the bash and background task tools." envvar:"BORIS_NO_BASH"`
	DisableTools    []string      `help:"Do not offer these tools (comma-separated or repeated)." placeholder:"NAME" envvar:"BORIS_DISABLE_TOOLS"`
	MaxFileSize     string        `help:"Largest file the file tools read or write: bytes, or with a unit (512KB, 10MB, 10MiB, 10M)." default:"10MB" envvar:"BORIS_MAX_FILE_SIZE"`
	OutputBudget    int           `help:"Most characters one tool result shows of a command's output, a file or a search (the rest is saved and the result says how to read it); 0 fits each client Boris knows (30,000 where the client allows them; see docs/clients.md)." default:"0" envvar:"BORIS_OUTPUT_BUDGET"`
	AnthropicCompat bool          `help:"Offer one str_replace_editor tool instead of view, str_replace and create_file." envvar:"BORIS_ANTHROPIC_COMPAT"`
	Tools           string        `help:"Tool set to offer: boris (Boris's own tools), claude-code (Claude Code's tool names and parameters: Bash, Read, Write, Edit, ...) or codex (Codex's: exec_command, write_stdin, apply_patch, view_image)." default:"boris" enum:"boris,claude-code,codex" envvar:"BORIS_TOOLS"`
	Structured      bool          `name:"structured-output" help:"Add structuredContent and an outputSchema to tool results that have a structured form (for programs; models read the text)." envvar:"BORIS_STRUCTURED_OUTPUT"`
	RequireView     bool          `name:"require-view-before-edit" help:"Refuse str_replace on a file not viewed or written in this session." default:"true" negatable:"" envvar:"BORIS_REQUIRE_VIEW_BEFORE_EDIT"`
	Token           string        `for:"http,watch" placeholder:"TOKEN" help:"Require this bearer token on every HTTP request to /mcp (prefer --token-file or $BORIS_TOKEN: a command line is visible to every local user, and Boris warns then, as it does of a token under 16 characters)." envvar:"BORIS_TOKEN"`
	TokenFile       string        `for:"http,watch" help:"Read the bearer token from this file (its first line, trimmed)." placeholder:"PATH" envvar:"BORIS_TOKEN_FILE"`
	InitTokenFile   string        `for:"http" help:"Start without a token and accept it later, once, from POST /init carrying the secret in this file in a Boris-Init header (a warm pod claimed after it started; see docs/fleet.md)." placeholder:"PATH" envvar:"BORIS_INIT_TOKEN_FILE"`
	GenerateToken   bool          `for:"http,watch" help:"Generate a random bearer token and print it once to stderr, as export BORIS_TOKEN=... and a live view link." envvar:"BORIS_GENERATE_TOKEN"`
	AllowOrigin     []string      `for:"http" help:"Browser origin allowed to call /mcp with CORS, such as https://app.example.com (repeatable)." placeholder:"ORIGIN" envvar:"BORIS_ALLOW_ORIGINS"`
	InsecureNoAuth  bool          `for:"http,watch" name:"insecure-no-auth" help:"Allow listening on a non-loopback address without a token (trusted networks only)." envvar:"BORIS_INSECURE_NO_AUTH"`
	MaxRequestSize  string        `for:"http" help:"Largest HTTP request body accepted." default:"4MiB" envvar:"BORIS_MAX_REQUEST_SIZE"`
	MaxSessions     int           `for:"http" help:"Most live MCP sessions over HTTP, and most stateless workspaces; when full, the least recently used idle one is closed." default:"64" envvar:"BORIS_MAX_SESSIONS"`
	SessionIdle     time.Duration `for:"http" name:"session-idle-timeout" help:"Seconds (or a duration such as 30m) before an idle HTTP session or stateless workspace is closed and its processes killed." default:"1800" envvar:"BORIS_SESSION_IDLE_TIMEOUT"`
	Stateless       bool          `for:"http" help:"Serve only stateless HTTP (MCP 2026-07-28 style, no Mcp-Session-Id), for replicas behind a plain load balancer." envvar:"BORIS_STATELESS"`
	MaxTasks        int           `name:"max-background-tasks" help:"Most running background tasks per session." default:"16" envvar:"BORIS_MAX_BACKGROUND_TASKS"`
	MaxProcesses    int           `help:"Most processes and threads one command (or background task) may have at once; one that tries for more is killed, with everything it started. 0 leaves Boris and other sessions room under the limit Boris itself runs under (at most 4096); -1: no limit." default:"0" envvar:"BORIS_MAX_PROCESSES"`
	TaskAfter       time.Duration `name:"task-after" help:"Seconds (or a duration such as 20s) a bash call runs before it becomes an MCP task, for clients that declare the Tasks extension (0: never)." default:"20" envvar:"BORIS_TASK_AFTER"`
	CallDeadline    time.Duration `name:"call-deadline" help:"Seconds (or a duration such as 2m) after which the client gives up on a tool call: a command still running shortly before then goes on as a background task, and the call returns its task id (0: the deadline of the client, where Boris knows one that cannot be extended; see docs/clients.md)." default:"0" envvar:"BORIS_CALL_DEADLINE"`
	RouterTimeout   time.Duration `for:"http" name:"router-timeout" help:"Seconds (or a duration such as 3m) a sandbox router allows each request (agent-sandbox's --proxy-timeout): a call that carries X-Sandbox-ID goes on in the background before then." default:"180" envvar:"BORIS_ROUTER_TIMEOUT"`
	BackgroundLimit time.Duration `name:"background-task-timeout" help:"Seconds (or a duration such as 2h) a background task may run before it is killed (0: no limit)." default:"0" envvar:"BORIS_BACKGROUND_TASK_TIMEOUT"`
	StateDir        string        `help:"Where Boris keeps checkpoints and what a restarted Boris knows of its workspaces and tasks (default: $XDG_STATE_HOME/boris, else ~/.local/state/boris); workspaces and tasks are kept only when it is given; put it on a volume that outlives the process to resume after a restart." placeholder:"DIR" envvar:"BORIS_STATE_DIR"`
	NoCheckpoints   bool          `help:"Do not keep checkpoints of what calls change, and offer no checkpoint or rewind tools." envvar:"BORIS_NO_CHECKPOINTS"`
	CheckpointFile  string        `name:"checkpoint-max-file-size" help:"Largest file whose content a checkpoint keeps; a larger file's changes are listed as not restorable." default:"16MB" envvar:"BORIS_CHECKPOINT_MAX_FILE_SIZE"`
	CheckpointStore string        `name:"checkpoint-max-store" help:"Most bytes of file contents the checkpoints of one workspace keep; past it new changes are listed as not restorable." default:"2GB" envvar:"BORIS_CHECKPOINT_MAX_STORE"`
	CheckpointKeep  []string      `help:"Keep checkpoints of paths the default ignore list leaves out (node_modules, __pycache__, .venv...): a name or a glob (repeatable; never .git)." placeholder:"PATTERN" envvar:"BORIS_CHECKPOINT_KEEP"`
	CacheDir        string        `help:"Where Boris keeps what it can rebuild, such as search indexes (default: $XDG_CACHE_HOME/boris, else ~/.cache/boris)." placeholder:"DIR" envvar:"BORIS_CACHE_DIR"`
	NoSearchIndex   bool          `help:"Do not index big trees for grep: every search reads every file. An index is built in the background for a tree of about 50,000 files or more (or a tenth of that on its second search), holds every file up to 4 MiB in a file of about 1 byte per distinct trigram of each file, mapped rather than in the heap (in the cache directory, else a temporary file), and never changes a result." envvar:"BORIS_NO_SEARCH_INDEX"`
	LogLevel        string        `help:"Log level: debug, info, warn or error; auto is info over HTTP and warn on STDIO, whose clients file everything on stderr as errors." default:"auto" enum:"auto,debug,info,warn,error" envvar:"BORIS_LOG_LEVEL"`
	LogFormat       string        `help:"Log format: text or json." default:"text" enum:"text,json" envvar:"BORIS_LOG_FORMAT"`
	Watch           string        `help:"Serve the live view (/watch) on this address in stdio mode, such as 127.0.0.1:7777." placeholder:"ADDR" envvar:"BORIS_WATCH"`
	NoWatch         bool          `help:"Do not serve the live view of tool calls at /watch." envvar:"BORIS_NO_WATCH"`
	Version         bool          `help:"Print the version, and the Landlock ABI this kernel offers, and exit."`
}

// Parse reads args (without the program name) and the BORIS_* variables from getenv, and
// returns a validated Config. Help goes to stdout; then Parse returns [ErrExit]. For
// --version it returns [ErrVersion], for the caller to print the version. Any other error is one line fit to show a user.
// With no transport named, Parse chooses as [ParseStdin] does for a stdin that is not a pipe.
func Parse(args []string, getenv func(string) string, version string, stdout io.Writer) (Config, error) {
	return ParseStdin(args, getenv, version, stdout, false)
}

// ParseStdin is [Parse] for a process whose stdin is a pipe or a socket when stdinPipe
// is set. With no transport named, a flag only HTTP uses (--port, --host, a token, ...)
// means http; else a pipe as stdin means stdio; else http. The Config's TransportWhy says
// which and why.
func ParseStdin(args []string, getenv func(string) string, version string, stdout io.Writer, stdinPipe bool) (Config, error) {
	var c cli
	given, err := parseFlags(&c, args, getenv)
	switch {
	case errors.Is(err, ErrHelp):
		WriteHelp(stdout, "boris [flags]", description, &c)
		return Config{}, ErrExit
	case err != nil:
		return Config{}, err
	case c.Version:
		return Config{}, ErrVersion
	}
	why, err := c.transport(given, stdinPipe)
	if err != nil {
		return Config{}, err
	}
	cfg, err := c.config(getenv, version)
	cfg.TransportWhy = why
	return cfg, err
}

// transport settles c.Transport. A transport named (--transport, $BORIS_TRANSPORT) is
// kept, and a named stdio refuses a flag only HTTP uses: the command line contradicts
// itself. With none named, such a flag means http; else a pipe as stdin, as a client that
// starts Boris gives it, means stdio; else http. why says which, and why. Variables only
// HTTP uses do not choose HTTP: an environment serves many runs (an image sets $BORIS_HOST
// for its HTTP default and is also started over STDIO; a shell keeps $BORIS_TOKEN for the
// clients it starts), so with a pipe as stdin they are named as ignored.
func (c *cli) transport(given map[int]string, stdinPipe bool) (why string, err error) {
	t := reflect.TypeFor[cli]()
	var flags, vars []string // how each setting only HTTP uses was given
	for i := range t.NumField() {
		how, ok := given[i]
		switch t.Field(i).Tag.Get("for") {
		case "http,watch":
			ok = ok && c.Watch == ""
		case "http":
		default:
			ok = false
		}
		switch {
		case !ok:
		case strings.HasPrefix(how, "$"):
			vars = append(vars, how)
		default:
			flags = append(flags, how)
		}
	}
	tf, _ := t.FieldByName("Transport")
	if named, ok := given[tf.Index[0]]; ok {
		if c.Transport == "stdio" && len(flags) > 0 {
			return "", fmt.Errorf("%s is for HTTP, but %s names stdio: leave out %[1]s, or serve HTTP (--transport http)", flags[0], named)
		}
		return "", nil
	}
	switch {
	case len(flags) > 0:
		c.Transport = "http"
		return flags[0] + " is for HTTP", nil
	case stdinPipe:
		c.Transport = "stdio"
		ignored := ""
		if len(vars) > 0 {
			ignored = strings.Join(vars, " ") + " ignored; "
		}
		return "stdin is a pipe and no HTTP flag was given (" + ignored + "--transport http or --port serves HTTP)", nil
	}
	c.Transport = "http"
	return "stdin is not a pipe", nil
}

// description is what help says Boris is.
const description = "An MCP server that gives AI agents a shell, file viewing and editing, and search. " +
	"'boris watch [URL]' follows a server's live view of tool calls in a terminal."

// Default returns the Config that an empty command line and environment give: every
// setting at its default, working in the current directory. Tests start from it.
func Default() Config {
	cfg, err := Parse(nil, func(string) string { return "" }, "", io.Discard)
	if err != nil {
		panic("config: the defaults do not parse: " + err.Error()) // a programmer mistake
	}
	return cfg
}

// config checks what was parsed and makes the Config of it.
func (c *cli) config(getenv func(string) string, version string) (Config, error) {
	cfg := c.settings(version)
	checks := []func(*Config) error{
		c.network,
		c.limits,
		c.logLevel,
		func(cfg *Config) error { return c.paths(cfg, getenv) },
		c.watch,
		func(cfg *Config) error { return c.token(cfg, getenv) },
	}
	for _, check := range checks {
		if err := check(&cfg); err != nil {
			return Config{}, err
		}
	}
	return cfg, nil
}

// settings copies the settings that need no checking and sets the fixed defaults. It is
// one long table of fields.
func (c *cli) settings(version string) Config {
	return Config{
		Transport:             c.Transport,
		Host:                  c.Host,
		Port:                  c.Port,
		AllowDirs:             nonEmpty(c.AllowDir),
		DenyDirs:              nonEmpty(c.DenyDir),
		ConfineBash:           c.ConfineBash,
		ConfineNetwork:        c.ConfineNetwork,
		LandlockABI:           c.LandlockABI,
		NoBash:                c.NoBash,
		DisableTools:          splitList(c.DisableTools),
		AnthropicCompat:       c.AnthropicCompat,
		RequireViewBeforeEdit: c.RequireView,
		Tools:                 c.Tools,
		StructuredOutput:      c.Structured,
		Token:                 c.Token,
		AllowOrigins:          splitList(c.AllowOrigin),
		InsecureNoAuth:        c.InsecureNoAuth,
		MaxSessions:           c.MaxSessions,
		Stateless:             c.Stateless,
		StreamKeepAlive:       DefaultStreamKeepAlive,
		MaxBackgroundTasks:    c.MaxTasks,
		LogFormat:             c.LogFormat,
		NoWatch:               c.NoWatch,
		WatchAddr:             c.Watch,
		Shell:                 detectShell(),
		Version:               version,
		KillGrace:             DefaultKillGrace,
		OutputDrain:           DefaultOutputDrain,
		StdioDrain:            DefaultStdioDrain,
		MaxSpillFile:          DefaultMaxSpillFile,
		MaxSpillTotal:         DefaultMaxSpillTotal,
	}
}

// network checks the address to listen on.
func (c *cli) network(*Config) error {
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("--port %d is not a TCP port (0-65535)", c.Port)
	}
	if c.Host == "" || (net.ParseIP(c.Host) == nil && c.Host != "localhost") {
		if _, err := net.LookupHost(c.Host); c.Host == "" || err != nil {
			return fmt.Errorf("--host %q is not an address this machine can listen on", c.Host)
		}
	}
	return nil
}

// limits checks and sets the timeouts, sizes and counts.
func (c *cli) limits(cfg *Config) error {
	if c.Timeout <= 0 {
		return fmt.Errorf("--timeout must be a positive number of seconds, got %s", seconds(c.Timeout))
	}
	cfg.Timeout = c.Timeout
	cfg.NoSearchIndex = c.NoSearchIndex
	var err error
	if cfg.MaxFileSize, err = ParseSize(c.MaxFileSize); err != nil {
		return fmt.Errorf("--max-file-size: %w", err)
	}
	cfg.Checkpoints = !c.NoCheckpoints
	cfg.CheckpointKeep = nonEmpty(c.CheckpointKeep)
	if cfg.CheckpointMaxFileSize, err = ParseSize(c.CheckpointFile); err != nil {
		return fmt.Errorf("--checkpoint-max-file-size: %w", err)
	}
	if cfg.CheckpointMaxStore, err = ParseSize(c.CheckpointStore); err != nil {
		return fmt.Errorf("--checkpoint-max-store: %w", err)
	}
	if c.OutputBudget != 0 && c.OutputBudget < MinOutputBudget {
		return fmt.Errorf("--output-budget must be at least %d characters, got %d", MinOutputBudget, c.OutputBudget)
	}
	cfg.OutputBudget = c.OutputBudget
	if cfg.MaxRequestBytes, err = ParseSize(c.MaxRequestSize); err != nil {
		return fmt.Errorf("--max-request-size: %w", err)
	}
	if c.MaxSessions < 1 {
		return fmt.Errorf("--max-sessions must be at least 1, got %d", c.MaxSessions)
	}
	if c.SessionIdle < 0 {
		return fmt.Errorf("--session-idle-timeout must not be negative, got %s", seconds(c.SessionIdle))
	}
	cfg.SessionIdleTimeout = c.SessionIdle
	if c.MaxTasks < 1 {
		return fmt.Errorf("--max-background-tasks must be at least 1, got %d", c.MaxTasks)
	}
	if c.BackgroundLimit < 0 {
		return fmt.Errorf("--background-task-timeout must not be negative, got %s", seconds(c.BackgroundLimit))
	}
	cfg.BackgroundTaskLimit = c.BackgroundLimit
	if c.MaxProcesses < -1 {
		return fmt.Errorf("--max-processes must be at least 1 (or 0 for the default, -1 for no limit), got %d", c.MaxProcesses)
	}
	cfg.MaxProcesses = c.MaxProcesses
	if c.TaskAfter < 0 || c.CallDeadline < 0 {
		return fmt.Errorf("--task-after and --call-deadline must not be negative, got %s and %s", seconds(c.TaskAfter), seconds(c.CallDeadline))
	}
	cfg.TaskAfter, cfg.CallDeadline = c.TaskAfter, c.CallDeadline
	if c.RouterTimeout < 0 {
		return fmt.Errorf("--router-timeout must not be negative, got %s", seconds(c.RouterTimeout))
	}
	cfg.RouterTimeout = c.RouterTimeout
	return nil
}

// seconds writes d as a number of seconds, as the duration flags take it.
func seconds(d time.Duration) string { return strconv.FormatInt(int64(d/time.Second), 10) }

// logLevel sets the log level; auto is info over HTTP and warn on STDIO.
func (c *cli) logLevel(cfg *Config) error {
	level := c.LogLevel
	if level == "auto" {
		// A STDIO client such as Claude Code files every line on stderr as an error, so
		// the startup line and per-call audit stay quiet there unless asked for.
		level = "info"
		if c.Transport == "stdio" {
			level = "warn"
		}
	}
	if err := cfg.LogLevel.UnmarshalText([]byte(level)); err != nil {
		return fmt.Errorf("--log-level %q: use auto, debug, info, warn or error", c.LogLevel)
	}
	return nil
}

// paths makes the working directory and the directories of the rules absolute, checking
// that they exist.
func (c *cli) paths(cfg *Config, getenv func(string) string) error {
	wd, err := absDir(c.Workdir, getenv)
	if err != nil {
		return fmt.Errorf("--workdir: %w", err)
	}
	cfg.Workdir = wd
	for i, d := range cfg.AllowDirs {
		// Relative rules are taken against --workdir, as deny rules are (see pathscope.New),
		// never against the directory Boris was started from.
		if !filepath.IsAbs(d) && d != "~" && !strings.HasPrefix(d, "~/") {
			d = filepath.Join(wd, d)
		}
		abs, err := absDir(d, getenv)
		if err != nil {
			return fmt.Errorf("--allow-dir: %w", err)
		}
		cfg.AllowDirs[i] = abs
	}
	if cfg.StateDir, err = userDir(c.StateDir, "XDG_STATE_HOME", ".local/state", getenv); err != nil {
		return fmt.Errorf("--state-dir: %w", err)
	}
	cfg.StateDirGiven = c.StateDir != ""
	if cfg.CacheDir, err = userDir(c.CacheDir, "XDG_CACHE_HOME", ".cache", getenv); err != nil {
		return fmt.Errorf("--cache-dir: %w", err)
	}
	for _, d := range nonEmpty(c.ConfineWrite) {
		abs, err := absDir(d, getenv)
		if err != nil {
			return fmt.Errorf("--confine-write: %w", err)
		}
		cfg.ConfineWrite = append(cfg.ConfineWrite, abs)
	}
	for _, d := range nonEmpty(c.ConfineRead) {
		abs, err := absPath(d, getenv)
		if err != nil {
			return fmt.Errorf("--confine-read: %w", err)
		}
		cfg.ConfineRead = append(cfg.ConfineRead, abs)
	}
	return nil
}

// watch checks the browser origins and where the live view is served.
func (c *cli) watch(*Config) error {
	for _, o := range splitList(c.AllowOrigin) {
		if !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") || strings.HasSuffix(o, "/") || o == "*" {
			return fmt.Errorf("--allow-origin %q: give a scheme and host such as https://app.example.com, without a trailing slash or wildcard", o)
		}
	}
	if c.Watch == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(c.Watch)
	if err != nil || port == "" {
		return fmt.Errorf("--watch %q: give a host and port such as 127.0.0.1:7777", c.Watch)
	}
	switch {
	case c.NoWatch:
		return errors.New("--watch and --no-watch both given: choose one")
	case c.Transport != "stdio":
		return errors.New("--watch is for stdio mode; over http the live view is at /watch on the server's own port")
	case c.Token == "" && !c.GenerateToken && !c.InsecureNoAuth && !loopback.Host(host):
		return fmt.Errorf("refusing to serve the live view on %s without a token: set --token or --generate-token, or pass --insecure-no-auth on a trusted network", host)
	}
	return nil
}

// token sets the bearer token from --token, --token-file or --generate-token, and
// refuses to serve HTTP beyond loopback without one.
func (c *cli) token(cfg *Config, getenv func(string) string) error {
	if c.Token != "" && c.GenerateToken {
		return errors.New("--token and --generate-token both given: choose one")
	}
	if c.TokenFile != "" {
		if c.Token != "" || c.GenerateToken {
			return errors.New("--token-file given with --token or --generate-token: choose one")
		}
		path := c.TokenFile
		if path == "~" || strings.HasPrefix(path, "~/") {
			if home := getenv("HOME"); home != "" {
				path = filepath.Join(home, path[1:])
			}
		}
		tok, err := readToken(path)
		if err != nil {
			return err
		}
		cfg.Token, cfg.TokenFile = tok, path
	}
	if c.GenerateToken {
		cfg.Token = newToken()
		cfg.TokenGenerated = true
	}
	if c.InitTokenFile != "" {
		if cfg.Token != "" {
			return errors.New("--init-token-file given with a token: choose one (the token comes later, from POST /init)")
		}
		tok, err := readToken(c.InitTokenFile)
		if err != nil {
			return fmt.Errorf("--init-token-file: %w", err)
		}
		cfg.InitToken, cfg.InitTokenFile = tok, c.InitTokenFile
	}
	if cfg.Transport == "http" && cfg.Token == "" && cfg.InitToken == "" && !cfg.InsecureNoAuth && !loopback.Host(cfg.Host) {
		return fmt.Errorf("refusing to listen on %s without a token: anyone who reaches it gets a shell; set --token (or BORIS_TOKEN) or --generate-token, or pass --insecure-no-auth on a trusted network", cfg.Host)
	}
	return nil
}

// maxTokenFile bounds a token file: a token is a line, not a document.
const maxTokenFile = 64 << 10

// readToken reads the bearer token from path: its content, trimmed of surrounding white
// space, which must be one non-empty line.
func readToken(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return "", fmt.Errorf("--token-file %s: %w", path, err)
	}
	if len(b) > maxTokenFile {
		return "", fmt.Errorf("--token-file %s: over %d bytes; a token is one line", path, maxTokenFile)
	}
	tok := strings.TrimSpace(string(b))
	switch {
	case tok == "":
		return "", fmt.Errorf("--token-file %s is empty: write the token in it", path)
	case strings.ContainsAny(tok, "\r\n"):
		return "", fmt.Errorf("--token-file %s holds more than one line: write only the token", path)
	}
	return tok, nil
}

// ParseSize reads a byte count: plain bytes, or a number with a unit. KB, MB and GB are
// powers of 1000; KiB, MiB, GiB and the bare K, M and G are powers of 1024.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToUpper(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnit(unit)
	if num == "" || !ok {
		return 0, fmt.Errorf("%q is not a size: use bytes or a number with KB, MB, GB, KiB, MiB, GiB (e.g. 10MB)", s)
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n*float64(mult) > float64(1<<62) {
		return 0, fmt.Errorf("%q is not a size: use bytes or a number with KB, MB, GB, KiB, MiB, GiB (e.g. 10MB)", s)
	}
	v := int64(n * float64(mult))
	if v <= 0 {
		return 0, fmt.Errorf("%q: size must be positive", s)
	}
	return v, nil
}

// sizeUnit returns how many bytes the upper-case unit stands for.
func sizeUnit(unit string) (int64, bool) {
	switch unit {
	case "", "B":
		return 1, true
	case "KB":
		return 1000, true
	case "MB":
		return 1000 * 1000, true
	case "GB":
		return 1000 * 1000 * 1000, true
	case "K", "KIB":
		return 1 << 10, true
	case "M", "MIB":
		return 1 << 20, true
	case "G", "GIB":
		return 1 << 30, true
	}
	return 0, false
}

// SplitList splits a comma-separated list, leaving commas inside braces alone so that a
// pattern such as '**/*.{pem,key}' stays whole.
func SplitList(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	out = append(out, s[start:])
	return nonEmpty(out)
}

func splitList(in []string) []string {
	var out []string
	for _, s := range in {
		out = append(out, SplitList(s)...)
	}
	return out
}

func nonEmpty(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func absDir(dir string, getenv func(string) string) (string, error) {
	abs, err := absPath(dir, getenv)
	if err != nil {
		return "", err
	}
	if info, err := os.Stat(abs); err != nil || !info.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
	}
	return abs, nil
}

// absPath makes path absolute, with ~ as $HOME, and checks that it exists.
func absPath(path string, getenv func(string) string) (string, error) {
	if path == "~" || strings.HasPrefix(path, "~/") {
		if home := getenv("HOME"); home != "" {
			path = filepath.Join(home, path[1:])
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("%s does not exist", abs)
	}
	return abs, nil
}

// userDir makes the absolute path of a directory of Boris's own: dir as given (with ~ as
// $HOME), else boris under $xdgVar, else under $HOME/fallback, else under the system's
// temporary directory. The directory need not exist yet.
func userDir(dir, xdgVar, fallback string, getenv func(string) string) (string, error) {
	home := getenv("HOME")
	switch {
	case dir == "~" || strings.HasPrefix(dir, "~/"):
		if home == "" {
			return "", fmt.Errorf("%s names ~ but $HOME is not set", dir)
		}
		dir = filepath.Join(home, dir[1:])
	case dir != "":
	case filepath.IsAbs(getenv(xdgVar)):
		dir = filepath.Join(getenv(xdgVar), "boris")
	case home != "":
		dir = filepath.Join(home, fallback, "boris")
	default:
		dir = filepath.Join(os.TempDir(), "boris-"+strconv.Itoa(os.Getuid()), filepath.Base(fallback))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if info, err := os.Stat(abs); err == nil && !info.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
	}
	return abs, nil
}

func detectShell() string {
	if info, err := os.Stat("/bin/bash"); err == nil && !info.IsDir() {
		return "/bin/bash"
	}
	return "/bin/sh"
}

func newToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}
