package manifest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// document is one document of a file, with where it starts so positions the decoders report
// relative to the document can be turned into file lines.
type document struct {
	index     int // 1-based, in file order
	firstLine int // file line of the document's first line
	data      []byte
}

// lastLine is the file line of the document's last line.
func (d document) lastLine() int {
	return d.firstLine + bytes.Count(bytes.TrimSuffix(d.data, []byte("\n")), []byte("\n"))
}

// splitYAML cuts a file into its "---"-separated documents with apimachinery's reader (the one
// kubectl uses), then finds where each starts. The reader drops separator lines (though it
// keeps one that follows another as the next document's first line), so positions are recovered
// by matching each document against the file, line by line.
func splitYAML(data []byte) ([]document, *Error) {
	// The reader normalises CRLF to LF; doing the same first keeps the documents verbatim
	// substrings of what we search.
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []document
	cursor, line := 0, 1
	for {
		chunk, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, &Error{Document: len(docs) + 1, Line: badSeparatorLine(data, cursor, line), Reason: err.Error()}
		}
		// The reader ends every document with a newline, even the file's unterminated last line.
		body := bytes.TrimSuffix(chunk, []byte("\n"))
		for cursor < len(data) && !bytes.HasPrefix(data[cursor:], body) {
			next := bytes.IndexByte(data[cursor:], '\n')
			if next < 0 {
				break
			}
			cursor += next + 1
			line++
		}
		docs = append(docs, document{index: len(docs) + 1, firstLine: line, data: chunk})
		cursor += len(body)
		line += bytes.Count(body, []byte("\n"))
	}
}

// splitJSON cuts a stream of JSON values ({...} {...}) into documents.
func splitJSON(data []byte) ([]document, *Error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs []document
	for {
		var raw json.RawMessage
		start := int(dec.InputOffset())
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			e := &Error{Document: len(docs) + 1, Reason: err.Error()}
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				// Offset counts the offending byte as read.
				e.Line, e.Column = position(data, int(syn.Offset)-1)
				e.Reason = "invalid JSON: " + syn.Error()
			}
			return docs, e
		}
		// InputOffset is where the previous value ended; the new one starts after any whitespace.
		start += len(data[start:]) - len(bytes.TrimLeft(data[start:], " \t\r\n"))
		line, _ := position(data, start)
		docs = append(docs, document{index: len(docs) + 1, firstLine: line, data: raw})
	}
}

// position is the 1-based line and column of byte offset off in data.
func position(data []byte, off int) (line, col int) {
	off = min(off, len(data))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = off - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// badSeparatorLine finds the "---" line with text after it that stopped the reader, searching
// from cursor (on file line line); 0 if there is none.
func badSeparatorLine(data []byte, cursor, line int) int {
	for _, l := range bytes.SplitAfter(data[cursor:], []byte("\n")) {
		if rest, ok := bytes.CutPrefix(l, []byte("---")); ok {
			rest = bytes.TrimSpace(rest)
			if len(rest) > 0 && rest[0] != '#' {
				return line
			}
		}
		line++
	}
	return 0
}
