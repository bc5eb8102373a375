package report

import (
	"fmt"
	"strings"
	"time"
)

// Secs formats d in seconds with two decimals: "1.25s".
func Secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

// Pct formats a fraction as a percentage with one decimal: "12.5%".
func Pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// GroupTitle names grouping g in a table's head: "k6_scenario × k6_name".
func GroupTitle(g Grouping) string { return strings.Join(g, " × ") }
