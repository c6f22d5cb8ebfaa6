"""Write policy: sensitive-content detection, the S10 decision, permissions, confirmation."""
