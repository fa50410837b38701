package evidence

import "github.com/mandate-dev/mandate/internal/jcs"

// maxDepth bounds nesting, as encoding/json does.
const maxDepth = jcs.MaxDepth

// Canonical returns the canonical form of the JSON value in data (see
// package jcs): what every record body is written in.
func Canonical(data []byte) ([]byte, error) { return jcs.Canonical(data) }

// SyntaxError is a malformed JSON value; Offset is the byte where it was
// found.
type SyntaxError = jcs.SyntaxError

func appendString(dst []byte, s string) []byte { return jcs.AppendString(dst, s) }
