-- POST /v1/pets with one fixed body; wrk sends it as a static request.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"name":"Bench","categoryId":42,"status":"available"}'
