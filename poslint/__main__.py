from poslint.edge.cli import main

main()
