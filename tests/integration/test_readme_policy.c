/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The README's sample policy, taken from the README itself, with what agents run under it: a
 * Python virtual environment, a pip install of a local wheel that ships a .pem (as certifi does),
 * a git clone of a repository holding one, and an npm ci of a lock file whose package ships one.
 * Each must work, and the sample's `--` rule must still hold for a file the command itself would
 * create.  Nothing is fetched from a registry: the wheel, the repository and the npm tarball are
 * made here.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "tests/lib/harness.h"

/* The ```yaml block that starts with "# dshbox.yml" in the README. */
static char *readme_sample(void)
{
	_cleanup_free_ char *path = NULL;
	cr_assert(asprintf(&path, "%s/README.md", DSH_TOP) > 0);
	_cleanup_free_ char *readme = dsh_test_read_file(path);
	cr_assert(readme, "cannot read %s", path);
	const char *start = strstr(readme, "```yaml\n# dshbox.yml\n");
	cr_assert(start, "the README has no sample policy block");
	start += strlen("```yaml\n");
	const char *end = strstr(start, "```");
	cr_assert(end);
	return strndup(start, (size_t)(end - start));
}

Test(readme_policy, the_sample_policy_lets_agents_install_and_clone, .timeout = 300)
{
	dsh_test_require_backend();
	if (system("/usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null") != 0 || access("/usr/bin/git", X_OK) < 0)
		DSH_SKIP("python3 with venv (Debian's python3-venv) and git are needed");
	_cleanup_free_ char *top = dsh_test_mkdtemp(), *sample = readme_sample();
	_cleanup_free_ char *ws = NULL, *home = NULL, *cfg = NULL, *repo = NULL, *setup = NULL, *env_home = NULL;
	cr_assert(asprintf(&ws, "%s/ws", top) > 0 && asprintf(&home, "%s/home", top) > 0 &&
		  asprintf(&cfg, "%s/dshbox.yml", top) > 0 && asprintf(&repo, "%s/repo", top) > 0);
	/* A home with the directories the sample names, and a repository that tracks a .pem. */
	cr_assert(asprintf(&setup,
			   "mkdir -p '%s' '%s/.cache' '%s/.config' '%s' && cd '%s' && git init -q . && "
			   "echo cert > ca.pem && git add ca.pem && "
			   "git -c user.email=t@t -c user.name=t commit -qm pem",
			   ws, home, home, repo, repo) > 0);
	cr_assert_eq(system(setup), 0);
	dsh_test_write_file(cfg, sample);
	cr_assert(asprintf(&env_home, "HOME=%s", home) > 0);
	char *env[] = { env_home, "PATH=/usr/bin:/bin", NULL };
	static const char script_fmt[] =
		"set -e\n"
		"python3 -m venv v\n"
		"mkdir -p w/demo w/demo-1.0.dist-info && echo > w/demo/__init__.py && echo cert > w/demo/cacert.pem\n"
		"printf 'Metadata-Version: 2.1\\nName: demo\\nVersion: 1.0\\n' > w/demo-1.0.dist-info/METADATA\n"
		"printf 'Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n' "
		"> w/demo-1.0.dist-info/WHEEL\n"
		"printf 'demo/__init__.py,,\\ndemo/cacert.pem,,\\ndemo-1.0.dist-info/METADATA,,\\n"
		"demo-1.0.dist-info/WHEEL,,\\ndemo-1.0.dist-info/RECORD,,\\n' > w/demo-1.0.dist-info/RECORD\n"
		"(cd w && python3 -m zipfile -c ../demo-1.0-py3-none-any.whl demo demo-1.0.dist-info)\n"
		"v/bin/pip install -q --no-index --no-cache-dir ./demo-1.0-py3-none-any.whl\n"
		"v/bin/python -c 'import demo, os; print(\"pem\", os.path.exists(os.path.join(os.path.dirname(demo.__file__), "
		"\"cacert.pem\")))'\n"
		"git clone -q '%s' clone && test -s clone/ca.pem && echo cloned\n"
		"mkdir -p d\n"
		"if (echo SECRET=1 > d/.env) 2>/dev/null; then echo planted; else echo refused; fi\n";
	_cleanup_free_ char *script = NULL;
	cr_assert(asprintf(&script, script_fmt, repo) > 0);
	const char *argv[] = { dsh_test_dshbox(), "run", "--config", cfg, "--workspace", ws, "--cwd", ws, "--", "sh", "-c",
			       script, NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 0, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "pem True\n"), "pip installed a package shipping a .pem: %s%s", r.out, r.err);
	cr_expect(strstr(r.out, "cloned\n"), "git cloned a repository holding a .pem: %s%s", r.out, r.err);
	cr_expect(strstr(r.out, "refused\n"), "the sample's -- rule still holds for a file the command creates: %s",
		  r.out);
	dsh_proc_clear(&r);
	/* Host-side oracle: no .env was planted under the protected name. */
	_cleanup_free_ char *planted = NULL;
	cr_assert(asprintf(&planted, "%s/d/.env", ws) > 0);
	struct stat st;
	cr_expect_neq(stat(planted, &st), 0, "a .env was planted in the workspace");
	dsh_test_rmtree(top);
}

/*
 * npm ci of a project whose lock file names a local tarball shipping certs/ca.pem.  The home holds
 * ~/.npm, as on any machine that has run npm: in workspace-write the home is read-only, so npm can
 * read its cache but not create one (docs/policy.md).
 */
Test(readme_policy, the_sample_policy_lets_npm_ci_install_a_package_shipping_a_pem, .timeout = 300)
{
	dsh_test_require_backend();
	if (system("command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1") != 0)
		DSH_SKIP("npm and node are needed (Debian's npm and nodejs: tools/install-deps.sh installs them)");
	_cleanup_free_ char *top = dsh_test_mkdtemp(), *sample = readme_sample();
	_cleanup_free_ char *ws = NULL, *home = NULL, *cfg = NULL, *setup = NULL, *env_home = NULL;
	cr_assert(asprintf(&ws, "%s/ws", top) > 0 && asprintf(&home, "%s/home", top) > 0 &&
		  asprintf(&cfg, "%s/dshbox.yml", top) > 0);
	/* On the host: the package's tarball, and the project's lock file naming it (npm install). */
	cr_assert(asprintf(&setup,
			   "set -e; export HOME='%s' npm_config_update_notifier=false npm_config_audit=false "
			   "npm_config_fund=false; mkdir -p \"$HOME/.cache\" \"$HOME/.config\" \"$HOME/.npm\" '%s' "
			   "'%s/pkg/certs'; cd '%s/pkg'; echo 'module.exports = 1;' > index.js; echo cert > certs/ca.pem; "
			   "printf '{\"name\":\"demo-pem\",\"version\":\"1.0.0\",\"files\":[\"index.js\",\"certs\"]}' "
			   "> package.json; npm pack --silent --pack-destination '%s' >/dev/null; cd '%s'; "
			   "printf '{\"name\":\"app\",\"version\":\"1.0.0\",\"dependencies\":{\"demo-pem\":"
			   "\"file:../demo-pem-1.0.0.tgz\"}}' > package.json; npm install --silent --offline >/dev/null; "
			   "rm -rf node_modules; test -s package-lock.json",
			   home, ws, top, top, top, ws) > 0);
	cr_assert_eq(system(setup), 0, "could not prepare the npm project");
	dsh_test_write_file(cfg, sample);
	cr_assert(asprintf(&env_home, "HOME=%s", home) > 0);
	char *env[] = { env_home, "PATH=/usr/bin:/bin", "npm_config_update_notifier=false", NULL };
	const char *argv[] = { dsh_test_dshbox(), "run", "--config", cfg, "--workspace", ws, "--cwd", ws, "--", "sh", "-c",
			       "npm ci --no-audit --no-fund && test -s node_modules/demo-pem/certs/ca.pem && "
			       "node -e 'require(\"demo-pem\")' && echo installed",
			       NULL };
	struct dsh_proc r;
	cr_assert_eq(dsh_proc_run((char *const *)argv, env, NULL, &r), 0);
	cr_expect_eq(r.exit_code, 0, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "installed\n"), "npm ci installed a package shipping a .pem: %s%s", r.out, r.err);
	dsh_proc_clear(&r);
	/* Host-side oracle: the .pem is in the workspace, as npm unpacked it. */
	_cleanup_free_ char *pem = NULL;
	cr_assert(asprintf(&pem, "%s/node_modules/demo-pem/certs/ca.pem", ws) > 0);
	struct stat st;
	cr_expect_eq(stat(pem, &st), 0, "%s is missing on the host", pem);
	dsh_test_rmtree(top);
}
