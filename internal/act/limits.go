package act

// Limits on the work one call's classification may do. A hostile call must
// be decided quickly however it is shaped, and what a limit cuts off is not
// examined: it is recorded in Action.Unexamined, which the built-in policy
// turns into at least an ask (builtin.unexamined). docs/catalog.md lists
// them; TestLimitsAreDocumented keeps the list in step.
const (
	// MaxShellNesting bounds how deeply one command line nests
	// (…), $(…), `…`, ${…}, <(…) and { } groups. The parser's cost grows
	// with the square of the nesting, so a deeper line is not parsed.
	MaxShellNesting = 64
	// MaxShellTokens bounds the words and operators of one command line
	// (as shellShape counts them). Parsing costs one to two microseconds
	// a node, so a line with more is not parsed: at the limit parsing
	// takes 0.1–0.2 s. A 200 KB here-document of prose counts about 45,000.
	MaxShellTokens = 100_000
	// MaxShellWork bounds the syntax nodes the shell analysis visits for
	// one call, over every command line in it (nested sh -c strings too).
	MaxShellWork = 50_000
	// MaxShellCommands bounds the simple commands analysed per call.
	MaxShellCommands = 512
	// MaxShellDepth bounds nested interpreters (sh -c "sh -c …").
	MaxShellDepth = 8
	// MaxArgDepth and MaxArgNodes bound the walk through a call's
	// arguments (JSON objects and arrays).
	MaxArgDepth = 32
	MaxArgNodes = 20_000
	// MaxScanPerString and MaxScanTotal bound how much argument text is
	// scanned for secrets, addresses and links: per string and per call.
	MaxScanPerString = 1 << 20
	MaxScanTotal     = 4 << 20
	// MaxRecipients bounds the addresses taken from the text of one
	// argument string.
	MaxRecipients = 1024
	// MaxURLsPerString bounds the links taken from one argument string.
	MaxURLsPerString = 256
	// MaxSQLWords bounds the words of one SQL statement that are read.
	MaxSQLWords = 4096
	// MaxCodeMatches bounds the matches of one code pattern (a file
	// opened, a command run) taken from one snippet.
	MaxCodeMatches = 256
)

// MaxNotes bounds how many notes one action carries; a pathological call
// (a shell script of thousands of commands) must not produce megabytes of
// explanation.
const MaxNotes = 48
