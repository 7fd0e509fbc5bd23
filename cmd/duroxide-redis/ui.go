package main

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// webFiles are the dashboard's templates, stylesheet and script, built into
// the binary so the command needs nothing beside it.
//
//go:embed web
var webFiles embed.FS

// uiOptions are the ui command's own flags.
type uiOptions struct {
	listen    string
	readOnly  bool
	token     string
	basicAuth string
	sample    time.Duration
}

func runUI(c *cli, args []string) error {
	fs := c.flags("ui")
	var o uiOptions
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8080", "address to serve the dashboard on")
	fs.BoolVar(&o.readOnly, "read-only", false, "hide and refuse cancel, raise, pause, resume and delete")
	fs.StringVar(&o.token, "token", c.getenv("DUROXIDE_UI_TOKEN"), "require this bearer token (Authorization header, or one visit with ?token= which sets a cookie); default $DUROXIDE_UI_TOKEN, which keeps it out of process listings")
	fs.StringVar(&o.basicAuth, "basic-auth", "", "require HTTP basic authentication as USER:PASS")
	fs.DurationVar(&o.sample, "sample", 3*time.Second, "how often the overview samples counters and queue depths")
	if _, err := c.parse(fs, args, 0, 0); err != nil {
		return err
	}
	if o.sample <= 0 {
		return usageErr("ui", "--sample must be positive")
	}
	if o.basicAuth != "" && !strings.Contains(o.basicAuth, ":") {
		return usageErr("ui", "--basic-auth must be USER:PASS")
	}
	s, err := c.open()
	if err != nil {
		return err
	}
	defer s.close()
	c.warnIfUncreated(s)
	srv, err := newUIServer(c, s, o)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		return usageErr("ui", "--listen %s: %v", o.listen, err)
	}
	go srv.sampler.run(c.base, o.sample)
	mode := ""
	if o.readOnly {
		mode = "read-only; "
	}
	fmt.Fprintf(c.stdout, "duroxide-redis ui: namespace %s at http://%s (%sCtrl-C to stop)\n", c.resolvedNamespace(), l.Addr(), mode)
	if o.token == "" && o.basicAuth == "" && !loopback(l.Addr()) {
		fmt.Fprintln(c.stderr, "duroxide-redis ui: warning: serving beyond this machine without --token or --basic-auth")
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-c.base.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(ctx)
	}()
	if err := hs.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func loopback(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}

// uiServer is the dashboard: one handler per page, behind authentication
// and cross-site request checks.
type uiServer struct {
	c       *cli
	s       *session
	opts    uiOptions
	csrf    string // per-server token every form carries
	pages   map[string]*template.Template
	lister  instanceLister
	sampler *sampler
	handler http.Handler
	// histories keeps the last histories read, for paging and refreshes
	histories historyCache
}

func newUIServer(c *cli, s *session, o uiOptions) (*uiServer, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	u := &uiServer{c: c, s: s, opts: o, csrf: hex.EncodeToString(b[:]), lister: providerLister{s}, sampler: newSampler(s, 120)}
	if err := u.parsePages("overview", "instances", "instance", "schedules", "flow", "error"); err != nil {
		return nil, err
	}
	u.sampler.sample(c.base) // the overview has figures from its first view
	static, _ := fs.Sub(webFiles, "web/static")
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", u.overview)
	mux.HandleFunc("GET /instances", u.instances)
	mux.HandleFunc("GET /instances/{id}", u.instance)
	mux.HandleFunc("GET /schedules", u.schedules)
	mux.HandleFunc("GET /flow", u.flow)
	mux.HandleFunc("POST /instances/{id}/cancel", u.action(u.cancel))
	mux.HandleFunc("POST /instances/{id}/raise", u.action(u.raise))
	mux.HandleFunc("POST /instances/{id}/pause", u.action(u.pause(true)))
	mux.HandleFunc("POST /instances/{id}/resume", u.action(u.pause(false)))
	mux.HandleFunc("POST /instances/{id}/delete", u.action(u.delete))
	mux.HandleFunc("POST /instances/{id}/rerun", u.action(u.rerun))
	u.handler = u.authenticate(securityHeaders(mux))
	return u, nil
}

func (u *uiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) { u.handler.ServeHTTP(w, r) }

// parsePages parses each page with the shared layout.
func (u *uiServer) parsePages(names ...string) error {
	u.pages = map[string]*template.Template{}
	for _, n := range names {
		t, err := template.New(n).Funcs(u.funcs()).ParseFS(webFiles, "web/layout.html", "web/"+n+".html")
		if err != nil {
			return err
		}
		u.pages[n] = t
	}
	return nil
}

func (u *uiServer) funcs() template.FuncMap {
	return template.FuncMap{
		"rel":      func(ms uint64) string { return relTime(msTime(ms), u.c.now()) },
		"relt":     func(t time.Time) string { return relTime(t, u.c.now()) },
		"rfc":      func(ms uint64) string { return rfcTime(ms) },
		"span":     spanText,
		"short":    func(s string) string { return abbreviate(s, payloadWidth) },
		"pretty":   prettyJSON,
		"optional": optional,
		"instURL":  instanceURL,
		"deref":    deref,
	}
}

// page is what every template sees: the page's own data and the server's
// switches.
type page struct {
	Title     string
	Namespace string
	ReadOnly  bool
	CSRF      string
	Done      string // the outcome of the action that redirected here
	Data      any
}

// render writes a page; a template failure after the first byte can only be
// logged, so pages are rendered into memory first.
func (u *uiServer) render(w http.ResponseWriter, r *http.Request, status int, name, title string, data any) {
	var b strings.Builder
	p := page{Title: title, Namespace: u.c.resolvedNamespace(), ReadOnly: u.opts.readOnly, CSRF: u.csrf, Done: r.URL.Query().Get("done"), Data: data}
	tmpl := "layout"
	if r.URL.Query().Get("partial") == "1" && u.pages[name].Lookup("live") != nil {
		tmpl = "live" // the part of a page the script refreshes
	}
	if err := u.pages[name].ExecuteTemplate(&b, tmpl, p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprint(w, b.String())
}

// fail shows err on a page, with the HTTP status its kind maps to.
func (u *uiServer) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := map[int]int{exitInvalid: http.StatusBadRequest, exitNotFound: http.StatusNotFound,
		exitConflict: http.StatusConflict, exitUnavailable: http.StatusServiceUnavailable}[exitCode(err)]
	if status == 0 {
		status = http.StatusInternalServerError
	}
	u.render(w, r, status, "error", http.StatusText(status), err.Error())
}

// session returns the server's connection bounded by the request and
// --timeout, so a slow Redis never holds a handler forever.
func (u *uiServer) session(r *http.Request) (*session, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(r.Context(), u.c.timeout)
	return u.s.withContext(ctx), cancel
}

// withContext is s with its calls bounded by ctx instead of the command's
// deadline: the server's connection outlives any one request.
func (s *session) withContext(ctx context.Context) *session {
	c := *s
	c.ctx = ctx
	return &c
}

// securityHeaders forbids framing (clickjacking of the action buttons),
// scripts from anywhere but the server, and MIME sniffing.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

// tokenCookie carries a --token after a ?token= visit.
const tokenCookie = "duroxide_ui_token"

// authenticate enforces --token and --basic-auth.
func (u *uiServer) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u.opts.basicAuth != "" {
			user, pass, ok := r.BasicAuth()
			if !ok || !same(user+":"+pass, u.opts.basicAuth) {
				w.Header().Set("WWW-Authenticate", `Basic realm="duroxide-redis"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
		}
		if u.opts.token != "" {
			if q := r.URL.Query().Get("token"); q != "" && same(q, u.opts.token) {
				// a login link: keep the token in a cookie and drop it from
				// the address bar and history
				http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
				rest := *r.URL
				qs := rest.Query()
				qs.Del("token")
				rest.RawQuery = qs.Encode()
				http.Redirect(w, r, rest.RequestURI(), http.StatusSeeOther)
				return
			}
			if !u.tokenOK(r) {
				http.Error(w, "a token is required: Authorization: Bearer TOKEN, or open the dashboard once with ?token=TOKEN", http.StatusUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (u *uiServer) tokenOK(r *http.Request) bool {
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && same(bearer, u.opts.token) {
		return true
	}
	ck, err := r.Cookie(tokenCookie)
	return err == nil && same(ck.Value, u.opts.token)
}

// same compares secrets in constant time.
func same(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// crossSite reports a request a page of another site made the browser send:
// by the Fetch metadata when the browser sends it, else by Origin.
func crossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	o, err := url.Parse(origin)
	return err != nil || o.Host != r.Host
}

// rfcTime is a provider timestamp in RFC 3339 (UTC), "-" when unset.
func rfcTime(ms uint64) string {
	if ms == 0 {
		return "-"
	}
	return msTime(ms).UTC().Format(time.RFC3339)
}

// spanText is a duration for a timeline: milliseconds below a second.
func spanText(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return shortDuration(d)
}

// instanceURL is the page of an instance; ids may hold any character.
func instanceURL(id string) string { return "/instances/" + url.PathEscape(id) }
