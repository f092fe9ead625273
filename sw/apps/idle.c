/*
 * idle.c - every core exits at once: nodes whose NIC carries traffic injected by the
 * simulator (`nanopu bench network`), with no program in the way.
 */
int main(void) { return 0; }
