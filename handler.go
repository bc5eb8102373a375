package k6labels

import (
	"context"
	"net/http"
	"strings"
)

// LabelsFromBaggageHandler wraps h so that each request carrying k6 baggage is
// served with pprof labels k6_test_run_id, k6_scenario, k6_name (and any other
// "k6." member, named the same way) on its goroutine and in its context.
// It has the name, signature and defaults of the handler in pyroscope-go's
// x/k6 package, so switching is a change of import.
func LabelsFromBaggageHandler(h http.Handler) http.Handler {
	return NewHandler(h)
}

// NewHandler returns h wrapped like [LabelsFromBaggageHandler], with options.
//
// The request handed to h has a context with the labels (so goroutines that h
// starts with that context, and span profilers, see them) and the goroutine
// has them while h runs. When h returns or panics, the goroutine gets back the
// labels it had before, and multipart files parsed into the request copy are
// removed. A request with no usable k6 member is passed on as it came.
func NewHandler(h http.Handler, opts ...Option) http.Handler {
	return &handler{next: h, labeler: newLabeler(opts)}
}

// Middleware returns a function that wraps a handler like [NewHandler], for
// routers that take middleware in that form, such as chi and gorilla/mux
// (router.Use(k6labels.Middleware())).
func Middleware(opts ...Option) func(http.Handler) http.Handler {
	l := newLabeler(opts)
	return func(h http.Handler) http.Handler {
		return &handler{next: h, labeler: l}
	}
}

type handler struct {
	next    http.Handler
	labeler *Labeler
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if lines := r.Header["Baggage"]; len(lines) > 0 {
		switch ctx, same := h.labeler.label(r.Context(), lines, r); {
		case ctx == nil:
		case !same:
			h.serveLabelled(ctx, w, r)
			return
		default:
			// The context is already labelled, but maybe not this
			// goroutine (a worker, or labels changed since).
			Do(ctx, func(context.Context) { h.serve(w, r) })
			return
		}
	}
	h.serve(w, r)
}

// serve passes r on as it came. net/http removes the multipart files of the
// request it handed out, but not when the handler panics.
func (h *handler) serve(w http.ResponseWriter, r *http.Request) {
	done := false
	defer func() {
		if !done {
			removeForm(r)
		}
	}()
	h.next.ServeHTTP(w, r)
	done = true
}

// serveLabelled serves a copy of r with the labelled context ctx, as
// [DoRequest] runs a request, inline: 47 of 1,693 instructions per k6 request
// (2.8%, BenchmarkHandler/Jslib, Valgrind) fewer than calling it.
func (h *handler) serveLabelled(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	// The context and the copy are allocated apart: a context that h keeps
	// (a background job's) must not keep the copy, and the form parsed into
	// it, alive.
	tctx, task := requestTask(ctx)
	r2 := r.WithContext(tctx)
	prev := getProfLabel()
	done := false
	defer func() {
		endTask(task)
		setProfLabel(prev)
		keepRoute(r, r2)
		// net/http never sees the copy, so its multipart files are ours to
		// remove (golang/go#58809), and on a panic the original's too.
		if f := r2.MultipartForm; f != nil && f != r.MultipartForm {
			_ = f.RemoveAll()
		}
		if !done {
			removeForm(r)
		}
	}()
	setGoroutineLabels(ctx)
	h.next.ServeHTTP(w, r2)
	done = true
}

// keepRoute gives r the pattern and path values that a ServeMux inside h
// set on the copy r2, as the mux would have set them on r without the copy:
// middleware around the handler reads the route there, after it returns.
func keepRoute(r, r2 *http.Request) {
	if r2.Pattern == r.Pattern {
		return
	}
	// The mux replaces the pattern it routed by: the wildcards of r's
	// pattern read "" afterwards, unless the new one has them too.
	wildcards(r.Pattern, func(name string) { r.SetPathValue(name, "") })
	wildcards(r2.Pattern, func(name string) { r.SetPathValue(name, r2.PathValue(name)) })
	r.Pattern = r2.Pattern
}

// wildcards calls f with the name of each wildcard of a ServeMux pattern:
// pattern = [METHOD ' '] [HOST] '/' [PATH], where a wildcard segment is
// "{NAME}" or "{NAME...}", and "{$}" matches the end of the path.
func wildcards(pattern string, f func(name string)) {
	for rest := pattern; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return
		}
		rest = rest[i+1:]
		j := strings.IndexByte(rest, '}')
		if j < 0 {
			return
		}
		if name := strings.TrimSuffix(rest[:j], "..."); name != "$" {
			f(name)
		}
		rest = rest[j+1:]
	}
}

func removeForm(r *http.Request) {
	if r.MultipartForm != nil {
		_ = r.MultipartForm.RemoveAll()
	}
}
