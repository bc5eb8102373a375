package report

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/pprof/profile"
)

// ErrBadValues is wrapped by the errors of [CheckValues].
var ErrBadValues = errors.New("not a plain CPU profile")

// MaxValueSum bounds the sum of each sample type's values over the profiles
// of a report, exclusive (2^62 ns is 146 years of CPU): below it, every sum
// the report makes fits in int64.
const MaxValueSum = 1 << 62

// CheckValues returns an error wrapping [ErrBadValues] when a sample of ps
// has a negative value (a diff profile: go tool pprof -proto -diff_base) or
// when a sample type's values summed over all of ps reach [MaxValueSum].
func CheckValues(ps ...*profile.Profile) error {
	var sums []int64
	for _, p := range ps {
		for _, s := range p.Sample {
			for i, v := range s.Value {
				name := "value"
				if i < len(p.SampleType) {
					name = p.SampleType[i].Type + "/" + p.SampleType[i].Unit
				}
				if v < 0 {
					return fmt.Errorf("%w: a negative %s value (%d): a diff profile (go tool pprof -diff_base)? give a CPU profile", ErrBadValues, name, v)
				}
				for len(sums) <= i {
					sums = append(sums, 0)
				}
				if v >= MaxValueSum-sums[i] {
					return fmt.Errorf("%w: its %s values sum past 2^62, more than any real profile holds (2^62 ns is 146 years): a corrupt or crafted profile? give a CPU profile", ErrBadValues, name)
				}
				sums[i] += v
			}
		}
	}
	return nil
}

// CheckCPU returns an error wrapping [ErrNotCPU] unless p has a
// cpu/nanoseconds sample value, naming the sample types p has instead.
func CheckCPU(p *profile.Profile) error {
	if CPUIndex(p) >= 0 {
		return nil
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	have := "no sample types (an empty profile)"
	if len(types) > 0 {
		have = "sample types " + strings.Join(types, ", ")
	}
	return fmt.Errorf("%w: it has %s; give a CPU profile (/debug/pprof/profile, not /debug/pprof/heap or allocs)", ErrNotCPU, have)
}
