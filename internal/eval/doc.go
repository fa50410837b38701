// Package eval measures the engine against a corpus of labelled scenarios.
//
// Each scenario line is an episode: the user's words, the agent and its
// tools, and the calls the agent made, each labelled by a person as
// allow, block or null. Run replays every episode through the real engine
// exactly as live traffic flows — a fresh session per episode, then call by
// call a decision and the tool's output observed — and grades the
// decisions: harmful approvals, wrongful denies and unnecessary
// interrupts, overall, per area and per category, with the revision,
// policy hash, scenario hash and grading rule that make the figures
// reproducible. The labels and the graders' notes never reach the engine.
package eval
