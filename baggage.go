package k6labels

import "github.com/k6labels/k6labels/internal/w3c"

// The W3C Baggage limits: a receiver must handle at least this much, and may
// drop whole members beyond it. The parser examines no more, so its work per
// request is bounded whatever a client sends.
const (
	// MaxBaggageBytes is how many bytes of baggage, over all header lines
	// together, are examined. A member cut by this limit is dropped whole.
	MaxBaggageBytes = 8192
	// MaxBaggageMembers is how many list members are examined, and how many
	// header lines: 64 members never need more lines, and without a cap on
	// lines thousands of empty ones would each cost a step.
	MaxBaggageMembers = 64
)

// A Member is one baggage list member: its key as sent and its value,
// percent-decoded.
type Member struct {
	Key   string
	Value string
}

// ParseBaggage returns the members of the baggage header lines in the order
// they were sent, with values percent-decoded. It applies the same rules as
// the middleware: malformed members are skipped, an invalid percent escape is
// kept as it was written, bytes that are not UTF-8 become U+FFFD, properties
// are dropped, and at most [MaxBaggageBytes] and [MaxBaggageMembers] are
// examined. Duplicate keys are all returned; the middleware keeps the last.
func ParseBaggage(lines ...string) []Member {
	var out []Member
	s := w3c.NewScanner(lines, MaxBaggageBytes, MaxBaggageMembers)
	for {
		key, raw, ok, more := s.Next()
		if !more {
			return out
		}
		if ok {
			out = append(out, Member{Key: key, Value: w3c.DecodeValue(raw)})
		}
	}
}
