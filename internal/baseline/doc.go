// Package baseline is an agent's own history as Mandate has seen it, and
// what a call looks like against it: the endpoint-detection idea of "this
// process did something unlike itself", for agents.
//
// A Profile is learned per agent and per version (the fingerprint of model,
// system-prompt hash, tool-set hash and retrieval source) from decided calls:
// allowed calls enter it, denied and asked ones only count in their
// session's shape. Config.Assess compares one call with a profile (first-seen
// destinations, rare tools and transitions, session rates, one score), and
// Compare compares two versions' profiles (drift). Everything here is pure:
// the engine loads and stores profiles, this package only computes.
//
// What the package knows — thresholds, weights, caps, which kinds are
// consequential, the shortcut patterns a review looks for — is data
// (baseline.yaml, embedded), read strictly with file:line errors.
package baseline
