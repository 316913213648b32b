insert into "APP"."NOTES"("ID","BODY") values ('1','line one
line two
''it''''s''
');