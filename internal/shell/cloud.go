package shell

import (
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/act"
)

// Cloud and container CLIs: docker, kubectl, terraform, aws, gsutil,
// gcloud and az, ansible — what each operation does and where it reaches.

func dockerSpecial(inv *invocation, _ *subTool, sub int) bool {
	verb := inv.argv[sub]
	if verb == "compose" && sub+1 < len(inv.argv) && inv.argv[sub+1] == "down" || verb == "down" && inv.name() != "docker" {
		p := parseFlags(inv.argv, sub+1, flagDef{})
		inv.kind(act.Execute)
		if p.has("v", "volumes") {
			inv.kind(act.Delete)
			inv.destructive = true
			inv.note("compose down -v deletes volumes with their data")
		}
		return true
	}
	if verb != "run" && verb != "create" {
		return false
	}
	inv.kind(act.Execute)
	p := parseFlags(inv.argv, sub+1, flagDef{short: "vemlpuwhcaL", long: []string{"volume", "env", "env-file", "mount", "label", "publish", "user", "workdir", "hostname", "name", "network", "entrypoint", "cpus", "memory", "platform", "add-host", "device", "cap-add", "cap-drop", "security-opt", "restart", "pull", "log-driver", "gpus", "shm-size", "ulimit", "tmpfs"}, stop: true})
	for _, v := range p.values("v", "volume") {
		host := strings.SplitN(v, ":", 2)[0]
		if strings.HasPrefix(host, "/") || strings.HasPrefix(host, ".") || strings.HasPrefix(host, "~") || strings.HasPrefix(host, "$") {
			pth := inv.w.addPath(host, act.Write, inv.env, false)
			inv.note("mounts " + pth + " into the container")
		}
	}
	for _, v := range p.values("mount") {
		for _, kv := range strings.Split(v, ",") {
			if k, val, ok := strings.Cut(kv, "="); ok && (k == "source" || k == "src") && strings.HasPrefix(val, "/") {
				inv.w.addPath(val, act.Write, inv.env, false)
			}
		}
	}
	for _, f := range p.values("env-file") {
		inv.w.addPath(f, act.Read, inv.env, false)
	}
	if p.has("privileged") {
		inv.note("runs a privileged container with full access to the host")
	}
	if n, ok := p.value("network"); ok && n == "host" {
		inv.note("shares the host's network")
	}
	if p.rest < len(inv.argv) {
		inv.note("runs the image " + inv.argv[p.rest])
	}
	return true
}

func kubectlSpecial(inv *invocation, t *subTool, sub int) bool {
	verb := inv.argv[sub]
	p := parseFlags(inv.argv, sub+1, t.global)
	if dr, ok := p.value("dry-run"); p.has("dry-run") && (!ok || dr == "" || dr == "client" || dr == "server" || dr == "true") {
		inv.act(rd, "")
		inv.note("--dry-run changes nothing")
		return true
	}
	if s, ok := p.value("s", "server"); ok {
		if h := act.HostOnly(s); h != "" {
			inv.w.host(h)
		}
	}
	if _, ok := p.value("token", "password"); ok {
		inv.w.res.Sensitive = true
		inv.note("passes cluster credentials on the command line")
	}
	switch verb {
	case "get", "describe", "edit":
		for _, i := range p.ops {
			r := strings.ToLower(inv.argv[i])
			if r == "secret" || r == "secrets" || strings.HasPrefix(r, "secret/") || strings.HasPrefix(r, "secrets/") {
				if verb != "edit" && !secretValuesShown(verb, p) {
					// describe, the default table and -o name
					// show names, types and sizes, never values.
					inv.act(rd, "")
					inv.note("lists Kubernetes secrets without their values")
					return true
				}
				inv.act(cred, "")
				inv.note("reads Kubernetes secrets")
				if verb == "edit" {
					inv.kind(act.Write)
					inv.external = true
				}
				return true
			}
		}
	case "config":
		if len(p.ops) > 0 && inv.argv[p.ops[0]] == "view" && p.has("raw", "flatten") {
			inv.act(cred, "")
			inv.note("prints cluster credentials")
			return true
		}
	case "rollout":
		if len(p.ops) > 0 && (inv.argv[p.ops[0]] == "status" || inv.argv[p.ops[0]] == "history") {
			inv.act(rd, "")
			return true
		}
	case "apply":
		if p.has("prune") {
			inv.act(delExt, "")
			inv.kind(act.Write)
			inv.note("apply --prune deletes the resources missing from the manifests")
			return true
		}
	case "replace":
		if p.has("force") {
			inv.act(delExt, "")
			inv.note("replace --force deletes and recreates resources")
			return true
		}
	case "exec", "run", "debug":
		// kubectl exec POD -- cmd: analyse the remote command.
		for i := sub + 1; i < len(inv.argv); i++ {
			if inv.argv[i] == "--" && i+1 < len(inv.argv) {
				inv.act(exeExt, "")
				inv.note("runs a command in the cluster")
				inv.emit()
				inv.done = true
				env := inv.env.sub("kubectl " + verb)
				env.remote = "cluster"
				inner := &invocation{w: inv.w, env: env, argv: inv.argv[i+1:], dyn: inv.dyn[i+1:], depth: inv.depth}
				inner.run()
				return true
			}
		}
	}
	return false
}

// secretValuesShown reports whether kubectl get/describe prints the values
// of the secrets it reads: -o yaml/json do, and so does a jsonpath,
// go-template or custom-columns output that mentions data (or whose
// template is not known); describe, the default table, -o wide and -o name
// do not.
func secretValuesShown(verb string, p parsedArgs) bool {
	if verb == "describe" {
		return false
	}
	o, ok := p.value("o", "output")
	if !ok {
		return false
	}
	format, tmpl, _ := strings.Cut(o, "=")
	switch format {
	case "name", "wide":
		return false
	case "jsonpath", "go-template", "custom-columns", "jsonpath-as-json", "template":
		if tmpl == "" {
			return true // the template is in a file or the next argument
		}
		t := strings.ToLower(tmpl)
		for _, m := range []string{".data", "stringdata", "'data'", `"data"`, "{.}", "{@}", "..", "{{.}}", "{{ . }}"} {
			if strings.Contains(t, m) {
				return true
			}
		}
		return false
	}
	return true
}

func terraformSpecial(inv *invocation, _ *subTool, sub int) bool {
	verb := inv.argv[sub]
	p := parseFlags(inv.argv, sub+1, flagDef{long: []string{"var", "var-file", "target", "out", "state", "state-out", "backup", "lock-timeout", "parallelism", "replace"}, longSingle: true})
	for _, f := range p.values("var-file") {
		inv.w.addPath(f, act.Read, inv.env, false)
	}
	if o, ok := p.value("out"); ok && verb == "plan" {
		inv.w.addPath(o, act.Write, inv.env, false)
		inv.kind(act.Write)
	}
	switch verb {
	case "apply", "plan":
		if p.has("destroy") {
			if verb == "apply" {
				inv.act(delExt, "")
				inv.note("terraform apply -destroy deletes real infrastructure")
				return true
			}
		}
		if verb == "apply" && p.has("auto-approve") {
			inv.note("-auto-approve skips terraform's own confirmation")
		}
	case "fmt":
		if p.has("check") {
			inv.act(rd, "")
			return true
		}
	}
	return false
}

// awsCmd: aws [options] SERVICE OPERATION [args].
func awsCmd(inv *invocation, s *cmdSpec) {
	p := parseFlags(inv.argv, 1, s.flags)
	if len(p.ops) == 0 {
		inv.act(rd, "")
		return
	}
	if u, ok := p.value("endpoint-url"); ok {
		inv.addURL(u)
	}
	service := inv.argv[p.ops[0]]
	op := ""
	if len(p.ops) > 1 {
		op = inv.argv[p.ops[1]]
	}
	switch {
	case service == "s3":
		s3Cmd(inv, op, p.ops[2:], "s3://")
		return
	case service == "configure":
		if op == "get" || op == "export-credentials" || op == "list" {
			inv.act(cred, "")
			inv.note("reads AWS credentials")
			return
		}
		inv.act(subAct{kinds: []act.Kind{act.Write, act.Credential}, cred: true}, "")
		inv.note("stores AWS credentials")
		return
	case service == "sts" && (op == "get-session-token" || op == "assume-role" || op == "get-federation-token" || op == "assume-role-with-web-identity" || op == "assume-role-with-saml"),
		service == "secretsmanager" && (op == "get-secret-value" || op == "batch-get-secret-value"),
		service == "ssm" && (op == "get-parameter" || op == "get-parameters" || op == "get-parameters-by-path") && strings.Contains(strings.Join(inv.argv, " "), "--with-decryption"),
		service == "kms" && op == "decrypt",
		service == "iam" && op == "create-access-key",
		service == "ecr" && (op == "get-login-password" || op == "get-authorization-token"),
		service == "codeartifact" && op == "get-authorization-token",
		service == "rds" && op == "generate-db-auth-token",
		service == "sso" && op == "get-role-credentials":
		a := cred
		if service != "secretsmanager" && service != "ssm" && service != "kms" {
			a.issuer = inv.w.k.issuers["aws"]
		}
		inv.act(a, "")
		inv.note("aws " + service + " " + op + " returns credentials or secrets")
		return
	}
	verb, _, _ := strings.Cut(op, "-")
	a, label := cliOp(inv, s, verb, "aws "+op+" deletes cloud resources")
	switch {
	case verb == "batch" && !strings.HasPrefix(op, "batch-get"):
		a, label = wrExt, true
	case verb == "batch", verb == "":
		a, label = rd, false
	}
	if label {
		inv.act(a, "aws "+service+" "+op)
	} else {
		inv.act(a, "")
	}
	if service == "lambda" && op == "invoke" {
		inv.act(exeExt, "")
	}
	if (service == "ses" || service == "sesv2" || service == "sns" || service == "sqs") && (strings.HasPrefix(op, "send") || op == "publish") {
		inv.act(snd, "")
		inv.note("sends messages through AWS")
	}
}

// cliOp is what a cloud CLI's operation word does: the kinds the verb
// vocabulary (then the command's own verbs) gives op's first word, for AWS
// ("terminate-instances"), or its last known word, for gcloud and az
// ("compute instances delete NAME"). The command's destructive verbs
// destroy what they act on; a word nothing knows is a remote write. label
// reports whether the action is a plain remote write, whose note names the
// operation. Only the command's destructive verbs delete.
func cliOp(inv *invocation, s *cmdSpec, verb, deletes string) (a subAct, label bool) {
	sk := inv.w.k
	ks := sk.verb(s, verb)
	if ks.Has(act.Delete) && !s.destroying[verb] {
		// Removing verbs other than the CLI's destructive ones take a
		// setting away (revoke-security-group-ingress, detach-policy,
		// cancel-…): a change of configuration, not lost data.
		ks = ks&^act.Bit(act.Delete) | act.Bit(act.Write)
	}
	switch {
	case ks == 0 || ks == act.Bit(act.Write):
		return wrExt, true
	case ks == act.Bit(act.Read):
		return rd, false
	}
	a = subAct{kinds: ks.List(), ext: true, cred: ks.Has(act.Credential)}
	if s.destroying[verb] && ks.Has(act.Delete) {
		a.destr = true
		a.note = deletes
	}
	return a, false
}

// s3Cmd handles aws s3 and gsutil: cp/mv/sync to a bucket send, from a
// bucket fetch, rm/rb delete.
func s3Cmd(inv *invocation, op string, ops []int, scheme string) {
	var args []int
	for _, i := range ops {
		if !strings.HasPrefix(inv.argv[i], "-") {
			args = append(args, i)
		}
	}
	isRemote := func(i int) bool {
		return strings.HasPrefix(inv.argv[i], scheme) || strings.HasPrefix(inv.argv[i], "s3://") || strings.HasPrefix(inv.argv[i], "gs://")
	}
	recursive := slices.Index(inv.argv, "--recursive") >= 0 || slices.Index(inv.argv, "-r") >= 0 || slices.Index(inv.argv, "-R") >= 0
	if slices.Index(inv.argv, "--dryrun") >= 0 || slices.Index(inv.argv, "--dry-run") >= 0 || slices.Index(inv.argv, "-n") >= 0 && scheme == "gs://" {
		inv.act(rd, "")
		inv.note("a dry run changes nothing")
		return
	}
	for i, a := range inv.argv {
		if (a == "--acl" && i+1 < len(inv.argv) && strings.HasPrefix(inv.argv[i+1], "public")) || a == "--acl=public-read" || a == "public-read" {
			inv.external = true
			inv.note("makes the object readable by anyone")
			break
		}
	}
	switch op {
	case "ls", "presign", "cat", "du", "stat":
		inv.act(rd, "")
		if op == "presign" {
			inv.note("creates a link that grants access to the object")
		}
		for _, i := range args {
			inv.addURL(inv.argv[i])
		}
	case "rm", "rb", "rmdir":
		inv.act(delExt, "")
		inv.destructive = recursive || op == "rb"
		for _, i := range args {
			inv.addURL(inv.argv[i])
			inv.note("deletes " + inv.argv[i])
		}
	case "mb":
		inv.act(wrExt, "")
	case "cp", "mv", "sync", "rsync":
		if len(args) < 2 {
			inv.act(exeExt, "")
			return
		}
		src, dst := args[:len(args)-1], args[len(args)-1]
		if (op == "sync" || op == "rsync") && slices.Index(inv.argv, "--delete") >= 0 || slices.Index(inv.argv, "-d") >= 0 && op == "rsync" {
			inv.destructive = true
			inv.note(op + " --delete removes destination files not in the source")
		}
		if isRemote(dst) {
			inv.act(snd, "")
			inv.addURL(inv.argv[dst])
			for _, i := range src {
				if isRemote(i) {
					inv.addURL(inv.argv[i])
					continue
				}
				fp := inv.addPath(i, act.Read)
				inv.note("uploads " + fp + " to " + inv.argv[dst])
			}
			return
		}
		inv.act(ftch, "")
		inv.kind(act.Write)
		for _, i := range src {
			inv.addURL(inv.argv[i])
		}
		inv.addPath(dst, act.Write)
	default:
		inv.act(exeExt, "")
	}
}

func gsutilCmd(inv *invocation, s *cmdSpec) {
	p := parseFlags(inv.argv, 1, flagDef{short: "ohp", stop: true})
	if p.rest >= len(inv.argv) {
		inv.act(rd, "")
		return
	}
	op := inv.argv[p.rest]
	var ops []int
	for i := p.rest + 1; i < len(inv.argv); i++ {
		ops = append(ops, i)
	}
	s3Cmd(inv, op, ops, "gs://")
}

// cloudVerbCmd: gcloud and az put the verb last: "gcloud compute
// instances delete NAME", "az vm delete -n NAME".
func cloudVerbCmd(inv *invocation, s *cmdSpec) {
	var ws []string
	for _, a := range inv.argv[1:] {
		if strings.HasPrefix(a, "-") {
			break
		}
		ws = append(ws, a)
	}
	joined := " " + strings.Join(ws, " ") + " "
	switch {
	case strings.Contains(joined, " print-access-token ") || strings.Contains(joined, " print-identity-token ") ||
		strings.Contains(joined, " get-access-token ") || strings.Contains(joined, " secrets versions access ") ||
		strings.Contains(joined, " keyvault secret show ") || strings.Contains(joined, " keyvault secret download ") ||
		strings.Contains(joined, " keys create ") && strings.Contains(joined, " service-accounts "):
		a := cred
		if strings.Contains(joined, "-token ") {
			// An access or identity token of the cloud itself.
			a.issuer = inv.w.k.issuers["google"]
			if inv.name() == "az" {
				a.issuer = inv.w.k.issuers["azure"]
			}
		}
		inv.act(a, "")
		inv.note(inv.name() + " prints credentials or secrets")
		return
	case strings.Contains(joined, " ssh ") || strings.Contains(joined, " scp ") || strings.Contains(joined, " run ") && strings.Contains(joined, " command "):
		inv.act(exeExt, "")
		return
	}
	// The last words may be resource names: the last word that names a
	// kind is the verb.
	verb := ""
	for i := len(ws) - 1; i >= 0; i-- {
		if inv.w.k.verb(s, ws[i]) != 0 {
			verb = ws[i]
			break
		}
	}
	a, label := cliOp(inv, s, verb, inv.name()+" "+strings.Join(ws, " ")+" deletes cloud resources")
	if label {
		inv.act(a, inv.name()+" "+strings.Join(ws, " "))
	} else {
		inv.act(a, "")
	}
}

// ansibleCmd: ansible runs modules on remote hosts; shell/command/raw
// module arguments are command lines.
func ansibleCmd(inv *invocation, s *cmdSpec) {
	inv.kind(act.Execute)
	inv.external = true
	p := parseFlags(inv.argv, 1, flagDef{short: "imaueftlMBPTkKbc", long: []string{"inventory", "module-name", "args", "user", "extra-vars", "forks", "tags", "limit", "module-path", "background", "poll", "timeout", "become-user", "become-method", "connection", "vault-password-file", "private-key", "skip-tags", "start-at-task"}})
	for _, f := range p.values("i", "inventory") {
		if !strings.Contains(f, ",") {
			inv.w.addPath(f, act.Read, inv.env, false)
		}
	}
	for _, f := range p.values("private-key", "vault-password-file") {
		inv.w.addPath(f, act.Read, inv.env, false)
	}
	if inv.name() == "ansible-playbook" {
		for _, i := range p.ops {
			inv.addPath(i, act.Execute)
		}
		inv.note("runs a playbook on remote hosts")
		return
	}
	mod, _ := p.value("m", "module-name")
	args, _ := p.value("a", "args")
	switch mod {
	case "shell", "command", "raw", "ansible.builtin.shell", "ansible.builtin.command", "ansible.builtin.raw":
		inv.note("runs a command on remote hosts")
		inv.emit()
		inv.done = true
		env := inv.env.sub("ansible -m " + mod)
		env.remote = "ansible hosts"
		inv.w.script(args, env, inv.depth+1)
	case "file":
		if strings.Contains(args, "state=absent") {
			inv.kind(act.Delete)
			inv.note("deletes files on remote hosts")
		} else {
			inv.kind(act.Write)
		}
	case "ping", "setup", "":
		inv.kind(act.Read)
	default:
		inv.kind(act.Write)
		inv.note("runs the module " + mod + " on remote hosts")
	}
}
