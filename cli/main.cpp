// kvfdp: the command-line tool.
#include "cli/app.hpp"

int main(int argc, char **argv)
{
	return kvfdp::cli::run(argc, argv);
}
