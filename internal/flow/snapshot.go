package flow

import "strings"

// Items of a page snapshot. A browser tool's snapshot of a page (an
// accessibility tree, as the Playwright MCP server returns it) lists the
// page's controls one a line, each with its role, its label in quotes and
// a reference the agent clicks it by: `- checkbox "Add 2-year Protection
// Plan (+19.99 €)" [ref=e14]`. The reference is the control's id and the
// label its name, as a listing's id and name are: a later browser_click
// {"ref": "e14"} names the control by its id alone, and the table holds
// its label against the user's words and against injected spans.

// snapshotItems records the controls of the snapshot lines in s: a line
// with a reference (`[KEY=ID]`, KEY one of snapshot_ref_keys) and a
// label in double quotes.
func (st *scanState) snapshotItems(s string) {
	if st.mode != modeOutput || len(st.s.voc.snapshotRefs) == 0 || !strings.Contains(s, "=") {
		return
	}
	for line := range strings.Lines(s) {
		if st.nListed >= maxItems {
			return
		}
		id := st.s.voc.snapshotRef(line)
		if id == "" {
			continue
		}
		name := quotedLabel(line)
		if name == "" {
			continue
		}
		st.nListed++
		it := st.listedItem(st.nListed)
		it.ID, it.Name = id, name
	}
}

// snapshotRef is the reference a snapshot line gives its control
// (`[ref=e14]`), or "".
func (v *vocabulary) snapshotRef(line string) string {
	for _, k := range v.snapshotRefs {
		i := strings.Index(line, "["+k+"=")
		if i < 0 {
			continue
		}
		rest := line[i+len(k)+2:]
		j := strings.IndexByte(rest, ']')
		if j <= 0 || j > 64 || strings.ContainsAny(rest[:j], " \t\"") {
			continue
		}
		return rest[:j]
	}
	return ""
}

// quotedLabel is the first text in double quotes on the line, trimmed,
// or "".
func quotedLabel(line string) string {
	i := strings.IndexByte(line, '"')
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(line[i+1:], '"')
	if j < 0 {
		return ""
	}
	return strings.TrimSpace(line[i+1 : i+1+j])
}
