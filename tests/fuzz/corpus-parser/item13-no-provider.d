/* CPython's configure feeds dtrace -G a file like this one. */
BEGIN
{
	printf("hello } world");
}
syscall::read:entry, syscall::write:entry
/pid == $target && arg0 > 2/
{
	@[probefunc] = count();
}
profile-97 { trace(1 / 2); }
pid$target:libc.so.6:malloc:entry { self->ts = timestamp; }
END {}
