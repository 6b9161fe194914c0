package explain

import (
	"fmt"
	"io"
	"strings"
)

// Write prints x for a terminal: the summary, then one labelled paragraph per field, lists as
// bullets.
func Write(w io.Writer, x Explanation) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", x.Object, x.Summary)
	fmt.Fprintf(&b, "\nDoing: %s\n", x.Doing)
	section(&b, "Why", x.Why)
	fmt.Fprintf(&b, "\nNext: %s\n", x.Next)
	section(&b, "You can", x.YouCan)
	section(&b, "Evidence", x.Evidence)
	_, err := io.WriteString(w, b.String())
	return err
}

func section(b *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s:\n", title)
	for _, it := range items {
		fmt.Fprintf(b, "  - %s\n", it)
	}
}
