package k6results

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
)

// ErrSummary is returned, wrapped with [ErrFormat], for k6's end-of-test
// summary (--summary-export, or handleSummary's JSON): it holds totals, not
// the requests' times and tags.
var ErrSummary = errors.New("a k6 summary, not the results of each request")

// checkSummary peeks at the start of json input: k6's --out json writes one
// object a line, each with a "type"; its summary is one object whose first
// line is neither a Point nor a Metric and which holds "metrics" or
// "root_group".
func checkSummary(br *bufio.Reader) error {
	head, _ := br.Peek(8 << 10)
	first, _, _ := bytes.Cut(head, []byte("\n"))
	if bytes.Contains(first, []byte(`"type":"Point"`)) || bytes.Contains(first, []byte(`"type":"Metric"`)) {
		return nil
	}
	if !bytes.Contains(head, []byte(`"metrics"`)) && !bytes.Contains(head, []byte(`"root_group"`)) {
		return nil
	}
	return fmt.Errorf("%w: %w: it has totals only; run k6 with --out json=FILE or --out csv=FILE and give that file", ErrFormat, ErrSummary)
}
