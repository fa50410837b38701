package ui

import "fmt"

// barChart is a grouped bar chart drawn as inline SVG by the templates:
// one group per category, one bar per series, values as shares (0–1).
type barChart struct {
	Categories []string
	Series     []chartSeries
	// Raw labels values as numbers (a divergence) instead of percentages.
	Raw bool
}

type chartSeries struct {
	Name   string
	Class  string
	Values []float64
}

// Chart geometry, in SVG user units.
const (
	chartHeight = 160
	chartTop    = 10
	chartLabel  = 40 // room under the bars for the category names
	barWidth    = 14
	groupGap    = 18
	// chartPad is room left and right for labels wider than their group.
	chartPad = 40
)

type chartBar struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

type chartLabelPos struct {
	X    float64
	Text string
}

// Layout is the chart's drawing: width, height, bars and labels.
type chartLayout struct {
	Width, Height, Base float64
	Bars                []chartBar
	Labels              []chartLabelPos
	Legend              []chartSeries
}

// Layout computes where every bar goes.
func (c *barChart) Layout() chartLayout {
	n := len(c.Series)
	group := float64(n*barWidth + groupGap)
	l := chartLayout{Width: group*float64(len(c.Categories)) + groupGap + 2*chartPad, Height: chartTop + chartHeight + chartLabel, Base: chartTop + chartHeight, Legend: c.Series}
	for ci, cat := range c.Categories {
		x0 := chartPad + groupGap + group*float64(ci)
		for si, s := range c.Series {
			v := s.Values[ci]
			h := v * chartHeight
			title := fmt.Sprintf("%s %s: %.0f%%", s.Name, cat, v*100)
			if c.Raw {
				title = fmt.Sprintf("%s %s: %.3f", s.Name, cat, v)
			}
			l.Bars = append(l.Bars, chartBar{X: x0 + float64(si*barWidth), Y: l.Base - h, W: barWidth - 2, H: h, Class: s.Class, Title: title})
		}
		l.Labels = append(l.Labels, chartLabelPos{X: x0 + float64(n*barWidth)/2, Text: trunc(14, cat)})
	}
	return l
}

// chartView is what the chart template draws: a title (its accessible
// name) and the layout.
type chartView struct {
	Title string
	L     chartLayout
}
