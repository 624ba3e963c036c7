"""Storage: the only package that speaks SQL. Accounts, keys, the credit ledger, activity."""
