package k6results

import "time"

// inWindow records t in AllStart/AllEnd and tells whether it is in the
// window; if not, it counts the n requests as Outside.
func (res *Results) inWindow(t time.Time, n int64) bool {
	if res.AllStart.IsZero() || t.Before(res.AllStart) {
		res.AllStart = t
	}
	if t.After(res.AllEnd) {
		res.AllEnd = t
	}
	if (!res.from.IsZero() && t.Before(res.from)) || (!res.to.IsZero() && t.After(res.to)) {
		res.Outside += n
		return false
	}
	return true
}

// addMethod counts n requests of k with k6's method tag method.
func (res *Results) addMethod(k Key, method string, n int64) {
	if method == "" {
		return
	}
	if res.Methods == nil {
		res.Methods = map[Key]map[string]int64{}
	}
	m := res.Methods[k]
	if m == nil {
		m = map[string]int64{}
		res.Methods[k] = m
	}
	m[method] += n
}
