package datafile

import (
	"strings"
	"testing"
	"time"
)

type inner struct {
	Name  string   `yaml:"name"`
	Words []string `yaml:"words"`
}

type doc struct {
	Items []inner          `yaml:"items"`
	Map   map[string]inner `yaml:"map"`
	One   *inner           `yaml:"one"`
}

func TestLoad(t *testing.T) {
	var d doc
	if err := Load("d.yaml", []byte("items:\n  - name: a\n    words: [x, y]\nmap:\n  k: {name: b}\n"), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Items) != 1 || d.Items[0].Name != "a" || d.Map["k"].Name != "b" {
		t.Errorf("decoded %+v", d)
	}
}

func TestLoadErrors(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 'b'; i <= 'k'; i++ {
		prev := string(i - 1)
		bomb += string(i) + ": &" + string(i) + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n"
	}
	for _, c := range []struct{ name, data, want string }{
		{"unknown top key", "itemz: []\n", `d.yaml:1: unknown key "itemz" (want one of items, map, one)`},
		{"unknown nested key", "items:\n  - name: a\n    wordz: [x]\n", `d.yaml:3: unknown key "wordz"`},
		{"unknown key in map value", "map:\n  k:\n    nam: b\n", `d.yaml:3: unknown key "nam"`},
		{"unknown key behind pointer", "one:\n  x: 1\n", `d.yaml:2: unknown key "x"`},
		{"wrong type", "items:\n  - name: [a]\n", "d.yaml:2: cannot unmarshal"},
		{"not a mapping", "- a\n", "d.yaml:1: the file must be a mapping"},
		{"empty", "   \n", "d.yaml: empty file"},
		{"too deep", "items: " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\n", "nested more than 64 levels"},
		{"alias bomb", bomb, "more than 1048576 nodes"},
		{"too big", "items: []\n#" + strings.Repeat("x", MaxSize), "more than the 4194304 a data file may have"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			var d doc
			err := Load("d.yaml", []byte(c.data), &d)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("took %v", el)
			}
		})
	}
}

func TestWords(t *testing.T) {
	if got := Words("a b", " c ", ""); strings.Join(got, ",") != "a,b,c" {
		t.Errorf("Words = %v", got)
	}
}
