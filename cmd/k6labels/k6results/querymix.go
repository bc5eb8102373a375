package k6results

import "strings"

// MaxQueryVariants is how many query strings a [QueryMix] counts apart.
const MaxQueryVariants = 64

// maxQueryLen cuts a query string kept as a variant, in bytes.
const maxQueryLen = 256

// QueryMix counts the requests of one name by query string, in bounded
// memory: at most MaxQueryVariants variants (Misra–Gries), the rest in
// Other. A count is exact while the name has no more variants than that;
// past it, each is low by at most the name's requests / (MaxQueryVariants+1).
type QueryMix struct {
	Counts map[string]int64 // query string ("" for none) → requests
	Other  int64            // requests not in Counts
}

// Total returns the requests counted in m.
func (m *QueryMix) Total() int64 {
	t := m.Other
	for _, c := range m.Counts {
		t += c
	}
	return t
}

// add counts n requests with query string q.
func (m *QueryMix) add(q string, n int64) {
	if m.Counts == nil {
		m.Counts = map[string]int64{}
	}
	if _, ok := m.Counts[q]; ok || len(m.Counts) < MaxQueryVariants {
		m.Counts[q] += n
		return
	}
	// Full: take d from every counter and from q, into Other; the counters
	// that reach 0 make room for what is left of q.
	d := n
	for _, c := range m.Counts {
		d = min(d, c)
	}
	for k := range m.Counts {
		if m.Counts[k] -= d; m.Counts[k] == 0 {
			delete(m.Counts, k)
		}
	}
	m.Other += d * int64(MaxQueryVariants+1)
	if n > d {
		m.Counts[q] = n - d
	}
}

// Query returns the query string of k6's name tag when the tag is a URL
// or a path ("" without one), without its fragment, cut to maxQueryLen.
func Query(tag string) string {
	i := strings.IndexByte(tag, '?')
	if i < 0 || strings.Contains(tag[:i], "#") || !(strings.HasPrefix(tag, "/") || strings.Contains(tag[:i], "://")) {
		return ""
	}
	q := tag[i+1:]
	if j := strings.IndexByte(q, '#'); j >= 0 {
		q = q[:j]
	}
	if len(q) > maxQueryLen {
		q = strings.ToValidUTF8(q[:maxQueryLen], "") + "…"
	}
	return q
}

// addQuery counts n requests of name tag in res.Queries by normalized name.
func (res *Results) addQuery(tag string, n int64) {
	if res.Queries == nil {
		res.Queries = map[string]*QueryMix{}
	}
	name := Name(tag)
	m := res.Queries[name]
	if m == nil {
		m = &QueryMix{}
		res.Queries[name] = m
	}
	m.add(Query(tag), n)
}
