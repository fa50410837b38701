package shell

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/act"
	"github.com/mandate-dev/mandate/internal/datafile"
)

// Development commands are development, not arbitrary code (issue 10.3).
// A build or test tool's command line can make it run or load code of the
// caller's choosing (go test -exec, make --eval, LD_PRELOAD=…, git -c
// core.pager=…), change the user's global configuration (git config
// --global, go env -w) or run a target that does far more than build and
// test (make deploy). Such a command carries a Hazard, saying which; the
// built-in policy does not count it as the project's own build and test
// commands, and asks about it. Emptying a file is destruction, however it
// is written (> file, cp /dev/null file, sed -i '1,$d' file). What the
// flags, keys, targets and forms are is data: the development and
// truncation parts of the shell section (data/commands-dev.yaml,
// data/commands-files.yaml).

// devSpec is the development part of a knowledge file's shell section.
type devSpec struct {
	// CodeFlags are, per program, the flags that make it run or load code
	// named on its command line: "FLAG", or "FLAG VALUE" when only a
	// value starting with VALUE does ("-o addopts"), or "FLAG !VALUE"
	// when any value but one starting with VALUE does ("-p !no:").
	CodeFlags map[string][]string `yaml:"code_flags"`
	// OutputFlags are, per program, the flags whose value is a file the
	// program writes (go test -coverprofile=FILE): recorded as written,
	// so that the scope rules see a write outside the project.
	OutputFlags map[string][]string `yaml:"output_flags"`
	// GitConfigKeys are git configuration keys whose value is a command
	// git runs (core.pager, core.fsmonitor); a key ending in "." stands
	// for every key under it (alias.).
	GitConfigKeys []string `yaml:"git_config_keys"`
	// GlobalConfig are command lines, per program, that write the user's
	// global configuration: the words after the program, the first one
	// the subcommand ("config --global").
	GlobalConfig map[string][]string `yaml:"global_config"`
	// TargetRunners are the programs whose operands are targets (make,
	// just), or "PROGRAM SUBCOMMAND" for those that run scripts by name
	// (npm run).
	TargetRunners []string `yaml:"target_runners"`
	// ConsequentialTargets are target names that do more than build and
	// test (deploy, release); a target matches one as a whole word of
	// its name (deploy-prod, release:patch).
	ConsequentialTargets []string `yaml:"consequential_targets"`
}

func (d *devSpec) merge(o *devSpec) {
	d.CodeFlags = appendLists(d.CodeFlags, o.CodeFlags)
	d.OutputFlags = appendLists(d.OutputFlags, o.OutputFlags)
	d.GitConfigKeys = append(d.GitConfigKeys, o.GitConfigKeys...)
	d.GlobalConfig = appendLists(d.GlobalConfig, o.GlobalConfig)
	d.TargetRunners = append(d.TargetRunners, o.TargetRunners...)
	d.ConsequentialTargets = append(d.ConsequentialTargets, o.ConsequentialTargets...)
}

// appendLists adds b's lists to a's, key by key (a flag may belong to
// several programs).
func appendLists(a, b map[string][]string) map[string][]string {
	if a == nil {
		a = map[string][]string{}
	}
	for k, v := range b {
		a[k] = append(a[k], v...)
	}
	return a
}

// truncSpec is the truncation part of a knowledge file's shell section.
type truncSpec struct {
	// EmptyPrograms write nothing to their standard output, so that
	// their output redirected to a file empties it (: > file).
	EmptyPrograms []string `yaml:"empty_programs"`
	// NullFiles are files that read as empty (/dev/null).
	NullFiles []string `yaml:"null_files"`
	// Copiers copy or link their first operands onto the last: copying a
	// null file over a file empties it (cp /dev/null file, ln -sf
	// /dev/null file).
	Copiers []string `yaml:"copiers"`
	// SedEmptying are sed scripts (regular expressions) that delete every
	// line: sed -i with one empties the file.
	SedEmptying []string `yaml:"sed_emptying"`
}

func (t *truncSpec) merge(o *truncSpec) {
	t.EmptyPrograms = append(t.EmptyPrograms, o.EmptyPrograms...)
	t.NullFiles = append(t.NullFiles, o.NullFiles...)
	t.Copiers = append(t.Copiers, o.Copiers...)
	t.SedEmptying = append(t.SedEmptying, o.SedEmptying...)
}

// codeFlag is one compiled CodeFlags entry.
type codeFlag struct {
	flag   string
	value  string // the value must start with it ("" for any)
	except bool   // the value must not start with value
}

// devKnowledge is the compiled development and truncation knowledge.
type devKnowledge struct {
	codeFlags     map[string][]codeFlag
	outputFlags   map[string][]string
	gitKeys       []string
	globalConfig  map[string][][]string
	targetRunners map[string][]string // program → subcommands ("" for none)
	targets       []string
	empty, null   map[string]bool
	copiers       map[string]bool
	sedEmptying   []*regexp.Regexp
}

func compileDev(d *devSpec, t *truncSpec) (*devKnowledge, error) {
	dk := &devKnowledge{codeFlags: map[string][]codeFlag{}, outputFlags: d.OutputFlags, globalConfig: map[string][][]string{},
		targetRunners: map[string][]string{}, empty: datafile.WordSet(t.EmptyPrograms), null: datafile.WordSet(t.NullFiles), copiers: datafile.WordSet(t.Copiers)}
	for prog, fs := range d.CodeFlags {
		for _, f := range fs {
			flag, val, _ := strings.Cut(f, " ")
			cf := codeFlag{flag: flag, value: val}
			if v, ok := strings.CutPrefix(val, "!"); ok {
				cf.value, cf.except = v, true
			}
			dk.codeFlags[prog] = append(dk.codeFlags[prog], cf)
		}
	}
	for _, k := range d.GitConfigKeys {
		dk.gitKeys = append(dk.gitKeys, strings.ToLower(k))
	}
	for prog, lines := range d.GlobalConfig {
		for _, l := range lines {
			dk.globalConfig[prog] = append(dk.globalConfig[prog], strings.Fields(l))
		}
	}
	for _, r := range d.TargetRunners {
		prog, sub, _ := strings.Cut(r, " ")
		dk.targetRunners[prog] = append(dk.targetRunners[prog], sub)
	}
	for _, tg := range d.ConsequentialTargets {
		dk.targets = append(dk.targets, strings.ToLower(tg))
	}
	for _, s := range t.SedEmptying {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, err
		}
		dk.sedEmptying = append(dk.sedEmptying, re)
	}
	return dk, nil
}

// flagValue returns the value argv gives flag at i (attached with = or,
// for a one-letter flag, directly; else the next element), and whether
// argv[i] is that flag at all.
func flagValue(argv []string, i int, flag string) (string, bool) {
	a := argv[i]
	switch {
	case a == flag:
		if i+1 < len(argv) {
			return argv[i+1], true
		}
		return "", true
	case strings.HasPrefix(a, flag+"="):
		return a[len(flag)+1:], true
	case len(flag) == 2 && flag[0] == '-' && flag[1] != '-' && strings.HasPrefix(a, flag):
		return a[2:], true
	}
	return "", false
}

// hazard says why the command does more than build and test, or "".
func (dk *devKnowledge) hazard(inv *invocation) string {
	base := inv.name()
	argv := inv.argv
	for i := 1; i < len(argv); i++ {
		if argv[i] == "--" {
			break
		}
		for _, cf := range dk.codeFlags[base] {
			v, ok := flagValue(argv, i, cf.flag)
			if !ok {
				continue
			}
			if cf.value != "" && strings.HasPrefix(v, cf.value) == cf.except {
				continue
			}
			return base + " " + cf.flag + " runs or loads code named on the command line"
		}
	}
	if base == "git" {
		if h := dk.gitHazard(argv); h != "" {
			return h
		}
	}
	for _, words := range dk.globalConfig[base] {
		if len(argv) > len(words) && argv[1] == words[0] && containsAll(argv[2:], words[1:]) {
			return base + " " + strings.Join(words, " ") + " changes the user's global configuration"
		}
	}
	for _, sub := range dk.targetRunners[base] {
		start := 1
		if sub != "" {
			if start = slices.Index(argv, sub) + 1; start == 0 {
				continue
			}
		}
		for _, a := range argv[start:] {
			if strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
				continue
			}
			if t := dk.consequential(a); t != "" {
				return base + " " + a + " runs a " + t + " target, which does more than build and test"
			}
		}
	}
	return ""
}

// gitHazard finds git -c KEY=VALUE (and --config-env) naming a key whose
// value git runs as a command.
func (dk *devKnowledge) gitHazard(argv []string) string {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") {
			break // the subcommand: -c comes before it
		}
		var kv string
		switch {
		case a == "-c" || a == "--config-env":
			if i+1 < len(argv) {
				kv = argv[i+1]
				i++
			}
		case strings.HasPrefix(a, "-c"):
			kv = a[2:]
		case strings.HasPrefix(a, "--config-env="):
			kv = a[len("--config-env="):]
		default:
			continue
		}
		key, _, _ := strings.Cut(strings.ToLower(kv), "=")
		for _, k := range dk.gitKeys {
			if key == k || strings.HasSuffix(k, ".") && strings.HasPrefix(key, k) {
				return "git -c " + key + " sets a command git runs"
			}
		}
	}
	return ""
}

// consequential returns the consequential target name t is, or "".
func (dk *devKnowledge) consequential(t string) string {
	t = strings.ToLower(t)
	for _, c := range dk.targets {
		if t == c {
			return c
		}
		for _, sep := range []string{"-", ":", "_", "/", "."} {
			if strings.HasPrefix(t, c+sep) || strings.HasSuffix(t, sep+c) || strings.Contains(t, sep+c+sep) {
				return c
			}
		}
	}
	return ""
}

func containsAll(xs, want []string) bool {
	for _, w := range want {
		if !slices.Contains(xs, w) {
			return false
		}
	}
	return true
}

// outputs records the files the command's output flags write.
func (dk *devKnowledge) outputs(inv *invocation) {
	flags := dk.outputFlags[inv.name()]
	for i := 1; i < len(inv.argv) && len(flags) > 0; i++ {
		for _, f := range flags {
			if v, ok := flagValue(inv.argv, i, f); ok && v != "" {
				inv.w.addPath(v, act.Write, inv.env, false)
				inv.note(inv.name() + " " + f + " writes " + v)
			}
		}
	}
}

// emptiesOutput reports whether the command writes nothing to its
// standard output (:, true, cat /dev/null, echo -n, printf ”), so that
// redirecting it to a file empties the file.
func (dk *devKnowledge) emptiesOutput(argv []string) bool {
	if len(argv) == 0 {
		return true
	}
	name := path.Base(argv[0])
	switch {
	case dk.empty[name] && len(argv) == 1:
		return true
	case name == "echo" && len(argv) == 2 && argv[1] == "-n":
		return true
	case name == "printf" && len(argv) == 2 && argv[1] == "":
		return true
	case name == "cat" && len(argv) > 1:
		for _, a := range argv[1:] {
			if !dk.null[a] {
				return false
			}
		}
		return true
	}
	return false
}

// copiesNull reports whether a copier puts a null file over its last
// operand (cp /dev/null file), returning that operand.
func (dk *devKnowledge) copiesNull(argv []string) (string, bool) {
	if !dk.copiers[path.Base(argv[0])] {
		return "", false
	}
	var ops []string
	for _, a := range argv[1:] {
		if !strings.HasPrefix(a, "-") {
			ops = append(ops, a)
		}
	}
	if len(ops) < 2 {
		return "", false
	}
	for _, o := range ops[:len(ops)-1] {
		if dk.null[o] {
			return ops[len(ops)-1], true
		}
	}
	return "", false
}

// sedEmpties reports whether a sed script deletes every line.
func (dk *devKnowledge) sedEmpties(script string) bool {
	for _, re := range dk.sedEmptying {
		if re.MatchString(script) {
			return true
		}
	}
	return false
}
