/* exit_minus_one.c - main returns -1: _init's exit writes all ones to tohost, which the
   simulator must report as exit code -1, never ignore. */
int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return -1;
}
