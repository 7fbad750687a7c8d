int lib_work(int n);
