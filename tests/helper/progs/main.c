int hlpt_run(int argc, char **argv);

int main(int argc, char **argv)
{
	return hlpt_run(argc, argv);
}
