package report

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
)

// Route-named services label a request with the route it was served under
// (WithServeMux, WithRoutePattern, a framework's route, a gRPC method)
// while k6 names it by its URL. routeMatcher finds, for a k6 request's
// method and URL, the label it was served under.
type routeMatcher struct {
	// muxes hold the label values that are Go 1.22+ ServeMux patterns,
	// asked with the standard library's own matcher; a pattern that
	// conflicts with those of one mux goes to the next.
	muxes []*http.ServeMux
	// templates are the chi/gorilla ({name}, {name:re}, /*) and Echo/Gin
	// (:name, *) patterns, as anchored regular expressions.
	templates []template
}

type template struct {
	label   string
	method  string // "" = any
	re      *regexp.Regexp
	literal int // literal bytes: the more, the more specific
}

var (
	methodPrefix = regexp.MustCompile(`^([A-Z]+) +(/.*)$`)
	frameworkSeg = regexp.MustCompile(`^(:[^/]+|\*[^/]*|\{[^/{}:]+:.+\})$`)
)

// newRouteMatcher classifies the label values: those that start with "/"
// (after an optional method) are routes; the others (k6's URLs and
// tags.name values) are matched by name only.
func newRouteMatcher(labels []string) *routeMatcher {
	m := &routeMatcher{}
	for _, l := range labels {
		method, path := "", l
		if sm := methodPrefix.FindStringSubmatch(l); sm != nil {
			method, path = sm[1], sm[2]
		}
		if !strings.HasPrefix(path, "/") {
			continue
		}
		if t, ok := frameworkTemplate(l, method, path); ok {
			m.templates = append(m.templates, t)
			continue
		}
		m.register(l)
	}
	return m
}

// frameworkTemplate makes a template of a route with a segment that
// ServeMux would read literally: :name, *, *name, {name:re}.
func frameworkTemplate(label, method, path string) (template, bool) {
	segs := strings.Split(path, "/")
	framework := false
	for _, s := range segs {
		framework = framework || frameworkSeg.MatchString(s)
	}
	if !framework {
		return template{}, false
	}
	var b strings.Builder
	literal := 0
	for i, s := range segs {
		if i > 0 {
			b.WriteString("/")
		}
		switch {
		case strings.HasPrefix(s, ":"):
			b.WriteString(`[^/]+`)
		case strings.HasPrefix(s, "*"):
			b.WriteString(`.*`)
		case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
			name := s[1 : len(s)-1]
			if _, re, ok := strings.Cut(name, ":"); ok {
				b.WriteString("(?:" + re + ")")
			} else if strings.HasSuffix(name, "...") {
				b.WriteString(`.*`)
			} else {
				b.WriteString(`[^/]+`)
			}
		default:
			b.WriteString(regexp.QuoteMeta(s))
			literal += len(s)
		}
	}
	re, err := regexp.Compile("^" + b.String() + "$")
	if err != nil {
		return template{}, false
	}
	return template{label: label, method: method, re: re, literal: literal}, true
}

// register adds a ServeMux pattern to the first mux it does not conflict
// with; ServeMux panics on an invalid or conflicting pattern.
func (m *routeMatcher) register(pattern string) {
	for i := 0; ; i++ {
		if i == len(m.muxes) {
			m.muxes = append(m.muxes, http.NewServeMux())
		}
		ok, invalid := tryHandle(m.muxes[i], pattern)
		if ok || invalid {
			return
		}
	}
}

// tryHandle registers pattern in mux; invalid tells a pattern that no mux
// takes, conflict (ok and invalid false) one that another mux may take.
func tryHandle(mux *http.ServeMux, pattern string) (ok, invalid bool) {
	defer func() {
		if e := recover(); e != nil {
			ok = false
			invalid = !strings.Contains(fmt.Sprint(e), "conflicts with")
		}
	}()
	mux.Handle(pattern, http.NotFoundHandler())
	return true, false
}

// match returns the labels a request of method to the URL name (a k6_name
// value: k6's URL without its query string) was served under: none, one,
// or several when the labels cannot tell.
func (m *routeMatcher) match(method, name string) []string {
	u, err := url.Parse(name)
	if err != nil || u.Path == "" || !strings.HasPrefix(u.Path, "/") {
		return nil
	}
	if method == "" {
		method = http.MethodGet
	}
	var out []string
	for _, mux := range m.muxes {
		req := &http.Request{Method: method, URL: u, Host: u.Host, Header: http.Header{}}
		if _, p := mux.Handler(req); p != "" {
			out = append(out, p)
		}
	}
	best := -1
	var tmatch []string
	for _, t := range m.templates {
		if (t.method != "" && t.method != method) || !t.re.MatchString(u.Path) {
			continue
		}
		switch {
		case t.literal > best:
			best, tmatch = t.literal, []string{t.label}
		case t.literal == best:
			tmatch = append(tmatch, t.label)
		}
	}
	out = append(out, tmatch...)
	slices.Sort(out)
	return slices.Compact(out)
}

// routeNames maps the k6 names that are no label to the route labels their
// requests were served under, by k6's method tag and URL. It returns k6
// results whose names are those labels (k unchanged when nothing maps),
// how many names it mapped, the k6 names that match several routes, with
// their candidates, and those mapped with a word under a wildcard
// (wordUnder).
func routeNames(k *k6results.Results, labels []string) (*k6results.Results, int, []string, []string) {
	if k == nil || len(labels) == 0 {
		return k, 0, nil, nil
	}
	m := newRouteMatcher(labels)
	if len(m.muxes) == 0 && len(m.templates) == 0 {
		return k, 0, nil, nil
	}
	out := *k
	out.Requests = map[k6results.Key]int64{}
	var ambiguous, words []string
	mapped := 0
	for _, key := range k.Keys() {
		n := k.Requests[key]
		if _, ok := slices.BinarySearch(labels, key.Name); ok {
			out.Requests[key] += n
			continue
		}
		methods := maps.Clone(k.Methods[key])
		matched := false
		var tagged int64
		for _, c := range methods {
			tagged += c
		}
		if tagged < n {
			if methods == nil {
				methods = map[string]int64{}
			}
			methods[""] += n - tagged // points without a method tag
		}
		for _, method := range slices.Sorted(maps.Keys(methods)) {
			c := methods[method]
			to := key
			switch ls := m.match(method, key.Name); len(ls) {
			case 0:
			case 1:
				to.Name, matched = ls[0], true
				if wordUnder(ls[0], key.Name) {
					words = append(words, fmt.Sprintf("%s %s (%d requests) under %s", cmp.Or(method, "GET"), key.Name, c, ls[0]))
				}
			default:
				ambiguous = append(ambiguous, fmt.Sprintf("%s %s (%d requests): %s", cmp.Or(method, "GET"), key.Name, c, strings.Join(ls, ", ")))
			}
			out.Requests[to] += c
		}
		if matched {
			mapped++
		}
	}
	if mapped == 0 {
		return k, 0, ambiguous, nil
	}
	return &out, mapped, ambiguous, words
}

// wordUnder tells whether URL name's path has a word (letters, '-', '_';
// no digit) where route has a one-segment wildcard, not a regexp: /cart/new under
// GET /cart/{id} may be a route of its own that used no sampled CPU, so
// that no label names it, where /cart/7 is what {id} is for.
func wordUnder(route, name string) bool {
	u, err := url.Parse(name)
	if err != nil {
		return false
	}
	if sm := methodPrefix.FindStringSubmatch(route); sm != nil {
		route = sm[2]
	}
	rs, ps := strings.Split(route, "/"), strings.Split(u.Path, "/")
	for i, r := range rs {
		if i >= len(ps) || strings.HasPrefix(r, "*") || strings.HasSuffix(r, "...}") {
			return false // past the path, or a wildcard of the rest
		}
		// ({name:re} says what it takes: a word it matches is meant.)
		wild := strings.HasPrefix(r, ":") || strings.HasPrefix(r, "{") && strings.HasSuffix(r, "}") && !strings.Contains(r, ":")
		if wild && isWord(ps[i]) {
			return true
		}
	}
	return false
}

// isWord tells whether s is two or more letters, '-' or '_', no digit.
func isWord(s string) bool {
	letters := 0
	for _, c := range s {
		switch {
		case unicode.IsLetter(c):
			letters++
		case c != '-' && c != '_':
			return false
		}
	}
	return letters >= 2
}

// matchRoutes maps the k6 names of b's k6 results to route labels (see
// routeNames) and notes what it did.
func (b *builder) matchRoutes() {
	labels, ok := b.values[LabelName]
	if b.opts.K6 == nil || !ok {
		return
	}
	k, mapped, ambiguous, words := routeNames(b.opts.K6, labels)
	if mapped > 0 {
		b.r.Notes = append(b.r.Notes, fmt.Sprintf("the k6_name labels are routes: %d k6 request names that are no label were matched to the route each request was served under, by k6's method tag and URL (Go's ServeMux patterns by ServeMux itself; {name}, {name:re}, :name and * segments as chi, gorilla, Echo and Gin read them)", mapped))
		b.opts.K6 = k
	}
	if len(ambiguous) > 0 {
		b.r.Notes = append(b.r.Notes, fmt.Sprintf("%d k6 request names match several route labels and are counted for none (listed as unmatched): %s", len(ambiguous), strings.Join(ambiguous, "; ")))
	}
	if len(words) > 0 {
		more := ""
		if len(words) > 5 {
			more = fmt.Sprintf("; and %d more", len(words)-5)
			words = words[:5]
		}
		b.r.Notes = append(b.r.Notes, fmt.Sprintf("a route is known only from its label, so a route that used no sampled CPU is unknown and its requests count under the wildcard route they also match: check that these, with a word where the route has a wildcard, are not routes of their own: %s%s", strings.Join(words, "; "), more))
	}
}

// foldQueries makes the k6_name values that keep their query string
// (WithQueryStrings) one row per URL without it, as k6's results name
// requests: b.variants keeps each row's labels, and a note says why the
// rows are per path and not per full URL.
func (b *builder) foldQueries() {
	labels, ok := b.values[LabelName]
	if !ok {
		return
	}
	variants := map[string][]string{}
	folded := 0
	for _, v := range labels {
		n := k6results.Name(v)
		variants[n] = append(variants[n], v)
		if n != v {
			folded++
		}
	}
	if folded == 0 {
		return
	}
	b.variants = variants
	b.values[LabelName] = slices.Sorted(maps.Keys(variants))
	b.r.Notes = append(b.r.Notes, fmt.Sprintf("%d k6_name labels keep their query string (WithQueryStrings): each k6_name row sums the labels of its URL without it, "+
		"as k6's results name requests; a row per full URL would miss requests, as the results count at most %d query strings per name apart, "+
		"and CPU, as the middleware labels at most its cap of values; the CPU per query string is kept for the query-mix finding",
		folded, k6results.MaxQueryVariants))
}

// foldParts returns the parts of a Split by g keyed with the k6_name
// value without its query string (see foldQueries), and the CPU of each
// folded part by query string.
func (b *builder) foldParts(g Grouping, parts map[string]Part) (map[string]Part, map[string]map[string]Count, error) {
	n := slices.Index(g, LabelName)
	if b.variants == nil || n < 0 {
		return parts, nil, nil
	}
	out := map[string]Part{}
	byQuery := map[string]map[string]Count{}
	profs := map[string][]*profile.Profile{}
	for k, part := range parts {
		vals := strings.Split(k, "\x00")
		label := vals[n]
		vals[n] = k6results.Name(label)
		key := TupleKey(vals)
		c := part.Count
		if part.Profile != nil {
			c, _ = countProfile(part.Profile, b.opts.SamplePeriod)
			profs[key] = append(profs[key], part.Profile)
		}
		if byQuery[key] == nil {
			byQuery[key] = map[string]Count{}
		}
		q := k6results.Query(label)
		byQuery[key][q] = byQuery[key][q].Plus(c)
		out[key] = Part{Count: out[key].Count.Plus(part.Count)}
	}
	for key, ps := range profs {
		p := ps[0]
		if len(ps) > 1 {
			var err error
			if p, err = profile.Merge(ps); err != nil {
				return nil, nil, fmt.Errorf("merging the %d profiles of %s: %w", len(ps), strings.ReplaceAll(key, "\x00", " "), err)
			}
		}
		out[key] = Part{Profile: p}
	}
	return out, byQuery, nil
}

// rowMatch returns the matcher sets of row's samples within b's scope: for
// a k6_name row of labels with query strings, one set per label.
func (b *builder) rowMatch(row *Row) [][]Matcher {
	ms := rowMatch(b.scope, row)
	n := slices.Index(row.By, LabelName)
	if b.variants == nil || n < 0 || len(ms) != 1 {
		return ms
	}
	vs := b.variants[row.Values[n]]
	if len(vs) == 0 {
		return ms
	}
	out := make([][]Matcher, len(vs))
	for i, v := range vs {
		out[i] = slices.Clone(ms[0])
		out[i][len(b.scope)+n].Value = v
	}
	return out
}
