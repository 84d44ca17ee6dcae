/* pgdisk_main.c -- the pgdisk binary. */
#include "pgdisk.h"

int main(int argc, char **argv)
{
	return pgdisk_main(argc, argv);
}
