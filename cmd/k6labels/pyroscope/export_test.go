package pyroscope

import "time"

// WithBackoff sets the first wait before a retry (doubled each time), so
// that tests of retries do not wait 3.5 s.
func WithBackoff(d time.Duration) Option { return func(c *Client) { c.backoff = d } }
