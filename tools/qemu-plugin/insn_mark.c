/* kvfdp-insn-mark: issues the insn_count plugin's markers in a guest (tools/qemu-plugin/insn_count.c).
 *
 *   kvfdp-insn-mark begin | end     one marker
 *   kvfdp-insn-mark CMD [ARG...]    begin, run CMD, wait for it, end; exits with CMD's status
 *
 * The marker is an 8-byte no-op, so without the plugin (or on hardware) this program changes
 * nothing and the plugin's output simply has no marks, which the reader reports as missing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void mark_begin(void)
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x84, 0x00, 0x01, 0x46, 0x56, 0x4b" ::: "memory");
}
static void mark_end(void)
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x84, 0x00, 0x02, 0x46, 0x56, 0x4b" ::: "memory");
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		fprintf(argc < 2 ? stderr : stdout,
			"usage: kvfdp-insn-mark begin | end | CMD [ARG...]\n");
		return argc < 2 ? 2 : 0;
	}
	if (argc == 2 && strcmp(argv[1], "begin") == 0) {
		mark_begin();
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "end") == 0) {
		mark_end();
		return 0;
	}
	mark_begin();
	pid_t pid = fork();
	if (pid < 0) {
		perror("kvfdp-insn-mark: fork");
		mark_end();
		return 1;
	}
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		fprintf(stderr, "kvfdp-insn-mark: cannot run %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
	}
	mark_end();
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
