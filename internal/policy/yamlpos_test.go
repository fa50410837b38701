package policy

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestScalarPos(t *testing.T) {
	cases := []struct {
		name   string
		src    string
		offset int
		want   position
	}{
		{"plain", "when: abc def\n", 4, position{1, 11}},
		{"plain start", "when: abc\n", 0, position{1, 7}},
		{"double quoted", "when: \"abc def\"\n", 4, position{1, 12}},
		{"single quoted", "when: 'abc def'\n", 4, position{1, 12}},
		{"plain continued", "when: abc &&\n  def\n", 7, position{2, 3}},
		{"literal", "when: |\n  abc\n  defg\n", 6, position{3, 5}},
		{"literal with blank line", "when: |\n  abc\n\n  defg\n", 6, position{4, 4}},
		{"folded", "when: >-\n  abc &&\n  def\n", 7, position{3, 3}},
		{"CRLF", "when: |\r\n  abc\r\n  defg\r\n", 6, position{3, 5}},
		{"nested indentation", "rules:\n  - name: x\n    when: |\n      a &&\n      bc\n", 6, position{5, 8}},
		{"offset past the end", "when: abc\n", 99, position{1, 7}},
		{"negative offset", "when: abc\n", -1, position{1, 7}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tc.src), &doc); err != nil {
				t.Fatal(err)
			}
			key, val := findWhen(doc.Content[0])
			if val == nil {
				t.Fatal("no when key")
			}
			got := scalarPos(splitLines([]byte(tc.src)), key.Column, val, tc.offset)
			if got != tc.want {
				t.Errorf("scalarPos(%q, %d) = %d:%d, want %d:%d", val.Value, tc.offset, got.line, got.col, tc.want.line, tc.want.col)
			}
		})
	}
}

// findWhen finds the first `when` key and its value anywhere under n.
func findWhen(n *yaml.Node) (*yaml.Node, *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "when" {
				return n.Content[i], n.Content[i+1]
			}
		}
	}
	for _, c := range n.Content {
		if k, v := findWhen(c); v != nil {
			return k, v
		}
	}
	return nil, nil
}

func TestLineColOffset(t *testing.T) {
	for _, tc := range []struct {
		text      string
		line, col int
		want      int
	}{
		{"abc", 1, 2, 2},
		{"ab\ncd", 2, 1, 4},
		{"é\nx", 2, 0, 2},
		{"abc", 0, 5, 0},
		{"abc", 1, -1, 0},
	} {
		if got := lineColOffset(tc.text, tc.line, tc.col); got != tc.want {
			t.Errorf("lineColOffset(%q, %d, %d) = %d, want %d", tc.text, tc.line, tc.col, got, tc.want)
		}
	}
}
