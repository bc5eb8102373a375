package k6labels

import "testing"

// Configurations that differ in any option that decides labels have
// different keys, and no key is 0, over every field's extremes: no field
// spills into another.
func TestConfigKeyFieldsApart(t *testing.T) {
	t.Parallel()
	type opts struct {
		valueBytes, labels, values int
		keepQuery                  bool
	}
	seen := make(map[uint64]opts)
	for _, vb := range []int{minValueBytes, DefaultMaxValueBytes, maxValueBytesLimit - 1, maxValueBytesLimit} {
		for _, nl := range []int{1, DefaultMaxLabels, maxLabelsLimit - 1, maxLabelsLimit} {
			for _, nv := range []int{1, DefaultMaxValuesPerLabel, maxValuesLimit - 1, maxValuesLimit} {
				for _, q := range []bool{false, true} {
					o := opts{vb, nl, nv, q}
					c := newConfig([]Option{WithMaxValueBytes(vb), WithMaxLabels(nl), WithMaxValuesPerLabel(nv), WithQueryStrings(q)})
					if got := (opts{c.maxValueBytes, c.maxLabels, c.maxValues, c.keepQuery}); got != o {
						t.Fatalf("options %+v made config %+v", o, got)
					}
					if c.key == 0 {
						t.Fatalf("options %+v: key 0", o)
					}
					if prev, dup := seen[c.key]; dup {
						t.Fatalf("options %+v and %+v share key %#x", o, prev, c.key)
					}
					seen[c.key] = o
				}
			}
		}
	}
}
