package baseline

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
)

// Tests that need no distribution estimate: how surprising it is that an
// item (a destination, a transition) appears in k of a new version's m
// sessions when the old version's n sessions never showed it.

// newItemP is the one-sided Fisher exact p-value of an item used in k of
// m sessions of the new version and in none of n sessions of the old: if
// both versions used it at the same per-session rate, each of the n+m
// sessions would be as likely as any other to be one of the k that used
// it, so the chance that all k are the new version's is C(m,k)/C(n+m,k).
// It needs no estimate of the rate, which is why it can speak before the
// new version has enough sessions for a distribution.
func newItemP(k, m, n int) float64 {
	if k <= 0 || k > m {
		return 1
	}
	return math.Exp(logChoose(m, k) - logChoose(n+m, k))
}

func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// taroneLevel is the per-item significance level for testing ps together
// at family-wise level alpha: Bonferroni over only the items that could be
// significant at all (Tarone's correction for discrete tests). An item
// never seen before has, for its k, no more extreme outcome than the one
// observed, so its p-value is also the least it could reach; items whose
// p-value is above alpha/K cannot count and do not widen the family.
func taroneLevel(ps []float64, alpha float64) float64 {
	if len(ps) == 0 {
		return alpha
	}
	sorted := slices.Sorted(slices.Values(ps))
	for k := 1; k < len(sorted); k++ {
		level := alpha / float64(k)
		within := 0
		for _, p := range sorted {
			if p <= level {
				within++
			}
		}
		if within <= k {
			return level
		}
	}
	return alpha / float64(len(sorted))
}

// permuter regroups the sessions of two versions at random into groups of
// their sizes, deterministically: seeded by the two version ids, so the
// same profiles always give the same verdict.
type permuter struct {
	rng   *rand.Rand
	idx   []int
	first []bool // first[i]: session i is in the first group of this split
	na    int
}

func newPermuter(a, b string, na, n int) *permuter {
	h := fnv.New64a()
	h.Write([]byte(a + "\x00" + b))
	p := &permuter{rng: rand.New(rand.NewPCG(h.Sum64(), uint64(n))), idx: make([]int, n), first: make([]bool, n), na: na}
	for i := range p.idx {
		p.idx[i] = i
	}
	return p
}

// next makes the next random split.
func (p *permuter) next() {
	p.rng.Shuffle(len(p.idx), func(i, j int) { p.idx[i], p.idx[j] = p.idx[j], p.idx[i] })
	for i, j := range p.idx {
		p.first[j] = i < p.na
	}
}

func (p *permuter) inFirst(i int) bool { return p.first[i] }
