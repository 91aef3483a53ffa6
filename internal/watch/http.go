package watch

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mjkoo/boris/internal/loopback"
	"github.com/mjkoo/boris/internal/streams"
)

//go:embed page
var page embed.FS

// cookieName holds a value derived from the token, never the token itself.
const cookieName = "boris_watch"

// heartbeat keeps an idle stream open through proxies and tells a dead client apart.
const heartbeat = 15 * time.Second

// HandlerOptions say how the watch endpoints are protected.
type HandlerOptions struct {
	// Token, when set, is required: as a bearer token, or exchanged once through
	// /watch?token= for a cookie.
	Token string
	// Loopback refuses requests whose Host is not a loopback name (DNS rebinding).
	Loopback bool
	// MaxStreams caps the event streams open at once: [DefaultMaxStreams] if 0.
	MaxStreams int
	// Rewind, when set, lets the person watching rewind the workspace to a call's
	// checkpoint (POST /watch/rewind); without it the page offers no rewind.
	Rewind Rewinder
}

// DefaultMaxStreams is how many event streams may be open at once. Past it, a new watcher
// takes the place of the one that has been stuck the longest in a write (a client that
// stopped reading), or is refused when none is: a stream holds at most about
// maxBatch bytes besides its connection, so the watchers' memory stays bounded.
const DefaultMaxStreams = 64

// writeTimeout is how long one write to a watcher may wait: one that reads nothing for
// that long is dropped. Heartbeats keep a reading watcher's writes short.
const writeTimeout = 30 * time.Second

// maxBatch is about how many bytes of events are encoded before they are written.
const maxBatch = 64 << 10

// Handler serves the page at /watch, its assets under /watch/, the event stream at
// /watch/events, the stop action at /watch/stop (POST) and, with o.Rewind, the rewind
// action at /watch/rewind (POST). Mount it at both "/watch" and "/watch/".
func Handler(h *Hub, o HandlerOptions) http.Handler {
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	w := &web{hub: h, opt: o, streams: streams.New(o.MaxStreams, writeTimeout)}
	if o.Token != "" {
		mac := hmac.New(sha256.New, []byte(o.Token))
		mac.Write([]byte("boris watch cookie"))
		w.cookie = hex.EncodeToString(mac.Sum(nil))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /watch", w.index)
	mux.HandleFunc("GET /watch/{$}", w.index)
	mux.HandleFunc("GET /watch/events", w.events)
	mux.HandleFunc("POST /watch/stop", w.stop)
	mux.HandleFunc("POST /watch/rewind", w.rewind)
	mux.HandleFunc("GET /watch/app.js", w.asset("app.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /watch/app.css", w.asset("app.css", "text/css; charset=utf-8"))
	return w.guard(mux)
}

type web struct {
	hub     *Hub
	opt     HandlerOptions
	cookie  string
	streams *streams.Limit
}

// guard checks Host and Origin for every request: only same-origin browsers, and
// programs that send no Origin, get through. No CORS headers are ever set.
func (w *web) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if w.opt.Loopback && !loopback.HostPort(r.Host) {
			plain(rw, http.StatusForbidden, fmt.Sprintf("host %q refused: this server only answers to localhost", r.Host))
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
			plain(rw, http.StatusForbidden, "cross-origin request refused")
			return
		}
		if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			plain(rw, http.StatusForbidden, "cross-site request refused")
			return
		}
		rw.Header().Set("X-Content-Type-Options", "nosniff")
		rw.Header().Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(rw, r)
	})
}

func sameOrigin(origin, host string) bool {
	rest, ok := strings.CutPrefix(origin, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(origin, "https://")
	}
	return ok && strings.EqualFold(rest, host)
}

// authorized reports whether r may see the stream: no token set, the bearer token, or
// the cookie the token was exchanged for.
func (w *web) authorized(r *http.Request) bool {
	if w.opt.Token == "" {
		return true
	}
	if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") && equal(strings.TrimSpace(tok), w.opt.Token) {
		return true
	}
	c, err := r.Cookie(cookieName)
	return err == nil && equal(c.Value, w.cookie)
}

func equal(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

func (w *web) index(rw http.ResponseWriter, r *http.Request) {
	if tok := r.URL.Query().Get("token"); tok != "" && w.opt.Token != "" {
		// One exchange: the token leaves the address bar and history at once.
		if !equal(tok, w.opt.Token) {
			plain(rw, http.StatusUnauthorized, "wrong token: open /watch?token=<the server's bearer token>")
			return
		}
		http.SetCookie(rw, &http.Cookie{Name: cookieName, Value: w.cookie, Path: "/watch", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		http.Redirect(rw, r, "/watch", http.StatusSeeOther)
		return
	}
	if !w.authorized(r) {
		plain(rw, http.StatusUnauthorized, "this server needs its token: open /watch?token=<the server's bearer token> once; a cookie then keeps you signed in")
		return
	}
	b, err := page.ReadFile("page/index.html")
	if err != nil {
		http.NotFound(rw, r)
		return
	}
	if w.opt.Rewind != nil {
		// The page offers "rewind to here" only where the server does.
		b = bytes.Replace(b, []byte("<body>"), []byte(`<body data-rewind="on">`), 1)
	}
	serveAsset(rw, b, "text/html; charset=utf-8")
}

func (w *web) asset(name, ctype string) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		b, err := page.ReadFile("page/" + name)
		if err != nil {
			http.NotFound(rw, r)
			return
		}
		serveAsset(rw, b, ctype)
	}
}

func serveAsset(rw http.ResponseWriter, b []byte, ctype string) {
	h := rw.Header()
	h.Set("Content-Type", ctype)
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	_, _ = rw.Write(b)
}

// events streams the hub as Server-Sent Events, from after Last-Event-ID (or ?after=)
// when given, else from the start of the history kept, after the live sessions.
func (w *web) events(rw http.ResponseWriter, r *http.Request) {
	if !w.authorized(r) {
		plain(rw, http.StatusUnauthorized, "missing or wrong token: send 'Authorization: Bearer <token>', or open /watch?token=<token> in a browser")
		return
	}
	last, resume, err := resumeFrom(r)
	if err != nil {
		plain(rw, http.StatusBadRequest, "Last-Event-ID must be an event id")
		return
	}
	st := w.streams.Open(rw)
	if st == nil {
		rw.Header().Set("Retry-After", "10")
		rw.Header().Set("Connection", "close")
		plain(rw, http.StatusServiceUnavailable, fmt.Sprintf("too many live view streams open (%d), all of them reading: close one, or retry later", w.opt.MaxStreams))
		return
	}
	defer st.Close()
	h := st.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	st.WriteHeader(http.StatusOK)

	sub := w.hub.Subscribe(last)
	defer sub.Close()
	var buf []byte
	if !resume {
		// Sessions opened before the history kept still show.
		for _, e := range w.hub.Sessions() {
			buf = appendEvent(buf[:0], e, false)
			if _, err := st.Write(buf); err != nil {
				return
			}
		}
	}
	w.stream(st, r, sub, buf)
}

// resumeFrom returns the event id a stream resumes after (Last-Event-ID, or ?after=), and
// whether one was given.
func resumeFrom(r *http.Request) (last uint64, resume bool, err error) {
	s := r.Header.Get("Last-Event-ID")
	if s == "" {
		s = r.URL.Query().Get("after")
	}
	if s == "" {
		return 0, false, nil
	}
	last, err = strconv.ParseUint(s, 10, 64)
	return last, true, err
}

// stream writes sub's events to st as they come, at most about maxBatch bytes a write,
// with a comment line every heartbeat to keep the connection open, until the client leaves,
// the stream is dropped or the hub closes. buf is a buffer to reuse.
func (w *web) stream(st *streams.Stream, r *http.Request, sub *Subscription, buf []byte) {
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		evs, wait := sub.Next(256)
		if len(evs) > 0 {
			buf = buf[:0]
			for i, e := range evs {
				buf = appendEvent(buf, e, e.ID != 0)
				if len(buf) < maxBatch && i < len(evs)-1 {
					continue
				}
				if _, err := st.Write(buf); err != nil || st.FlushError() != nil {
					return
				}
				buf = buf[:0]
			}
			continue
		}
		if err := st.FlushError(); err != nil {
			return
		}
		select {
		case <-wait:
		case <-beat.C:
			if _, err := io.WriteString(st, ": ping\n\n"); err != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-st.Dropped():
			return
		case <-w.hub.Closed():
			return
		}
	}
}

// appendEvent writes e as one SSE message; with id, its id line lets the client resume.
func appendEvent(b []byte, e Event, id bool) []byte {
	data, err := json.Marshal(e)
	if err != nil {
		return b
	}
	if id {
		b = append(b, "id: "...)
		b = strconv.AppendUint(b, e.ID, 10)
		b = append(b, '\n')
	}
	b = append(b, "data: "...)
	b = append(b, data...) // JSON has no raw newlines
	return append(b, "\n\n"...)
}

// mayChange reports whether r may change things (stop a command, rewind), answering it
// when not: it needs the token, and a same-origin browser (Origin checked by guard, the
// cookie SameSite=Strict) or a program that sends no Origin at all.
func (w *web) mayChange(rw http.ResponseWriter, r *http.Request) bool {
	if !w.authorized(r) {
		plain(rw, http.StatusUnauthorized, "missing or wrong token")
		return false
	}
	if r.Header.Get("Origin") == "" && r.Header.Get("Sec-Fetch-Site") != "" {
		plain(rw, http.StatusForbidden, "a browser request without Origin is refused")
		return false
	}
	return true
}

// stop stops a running command or task, for a request that [web.mayChange] things.
func (w *web) stop(rw http.ResponseWriter, r *http.Request) {
	if !w.mayChange(rw, r) {
		return
	}
	var in struct {
		Stop string `json:"stop"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&in); err != nil || in.Stop == "" {
		plain(rw, http.StatusBadRequest, `send {"stop": KEY} with the stop key of a running call or task`)
		return
	}
	if !w.hub.Stop(in.Stop) {
		plain(rw, http.StatusNotFound, "nothing running under that key: it has already ended")
		return
	}
	rw.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(rw, `{"stopping":true}`+"\n")
}

func plain(rw http.ResponseWriter, status int, msg string) {
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	rw.Header().Set("X-Content-Type-Options", "nosniff")
	rw.WriteHeader(status)
	_, _ = io.WriteString(rw, msg+"\n")
}
