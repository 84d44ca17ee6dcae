/* pgiofs_main.c -- entry point of bin/pgiofs (see cli.c). */
#include "pgiofs.h"

int main(int argc, char **argv)
{
	return pgiofs_main(argc, argv);
}
